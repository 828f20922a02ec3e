package com.livedelta.client;

import java.util.concurrent.ThreadLocalRandom;

/** A jittered exponential back-off, in milliseconds: half to all of {@code first} for attempt 0, doubling, at most {@code most}. */
final class Backoff {
    private Backoff() {}

    static double delay(int attempt, double first, double most) {
        double ceiling = Math.min(most, first * Math.pow(2, Math.min(attempt, 20)));
        return ceiling / 2 + ThreadLocalRandom.current().nextDouble() * ceiling / 2;
    }
}
