package com.livedelta.client;

/** An answer that is not a success, with the server's error code, message and pointer. */
public final class LiveDeltaException extends Exception {
    private static final long serialVersionUID = 1;
    /** The HTTP status; 0 where the connection failed. */
    public final int status;
    /** The server's code ({@code version_mismatch}, {@code session_not_found}, ...), or {@code network_error}. */
    public final String code;
    /** A JSON Pointer into the body sent, where the server gave one. */
    public final String pointer;
    /** Seconds the server asked to wait ({@code Retry-After}), or -1. */
    public final double retryAfter;
    /** The write's Idempotency-Key, to send the same write again later. */
    public final String idempotencyKey;

    public LiveDeltaException(int status, String code, String message, String pointer, double retryAfter, String idempotencyKey) {
        super(message);
        this.status = status;
        this.code = code;
        this.pointer = pointer;
        this.retryAfter = retryAfter;
        this.idempotencyKey = idempotencyKey;
    }

    /**
     * Whether trying again later may succeed: no connection, a timeout, a busy or failing server.
     * An event the app could not use ({@link SessionFollower#UNUSABLE_EVENT}) would come the same.
     */
    public boolean isTransient() {
        return (status == 0 && !SessionFollower.UNUSABLE_EVENT.equals(code)) || status == 408 || status == 429 || status >= 500;
    }
}
