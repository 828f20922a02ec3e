package com.livedelta.client;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.HttpURLConnection;
import java.net.SocketTimeoutException;
import java.net.URL;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;

/**
 * Follows one session's versions in the {@code sequential} format, over server-sent events on
 * {@link HttpURLConnection}, on a thread of its own, delivering on the app's {@link Executor}
 * (the main thread on Android). Resumes by the last event id after any disconnect; backs off
 * with jitter from 1 s to 32 s ({@code Retry-After} as a floor); a stream silent past the
 * heartbeat timeout is dropped and opened again; a new token is asked for once after a 401.
 * Every event is checked by version: one already given is dropped; a delta that does not start
 * at the version given, or a version without a delta, is a fresh read given as a reset. A
 * session that does not exist, or a refused token, stops it with {@link Listener#onStopped}.
 * {@link #stop()} and a new follower with {@link #resumeToken()} fit an app's lifecycle.
 */
public final class SessionFollower {
    /** What a follower tells the app, on its executor. */
    public interface Listener {
        /** The session whole (GET's answer, or a {@code reset} event): show it. */
        void onReset(Map<String, Object> session);

        /** One version in the {@code sequential} format; its {@code baseVersion} is the version given before. Return false where it does not fit: the follower then reads the session afresh. */
        boolean onDelta(Map<String, Object> event);

        /** The session went: {@code deleted}, {@code expired} or {@code evicted}. */
        default void onEnded(String reason) {}

        /**
         * Following stopped for good: a missing session, a refused token, or an event the app
         * could not use (code {@link SessionFollower#UNUSABLE_EVENT}: its data did not parse, or a
         * callback threw on it), which is never asked for again.
         */
        default void onStopped(LiveDeltaException error) {}

        /** {@code connecting}, {@code live}, {@code reconnecting}. */
        default void onState(String state) {}

        /** A window's rows are unchanged at a new version; where they are, or the total, changed. */
        default void onWindow(Map<String, Object> event) {}
    }

    /** A listener that keeps a {@link LiveList}, which dispatches each change to its callback. */
    public static Listener into(LiveList list) {
        return new Listener() {
            @Override
            public void onReset(Map<String, Object> session) {
                list.reset(session);
            }

            @Override
            public boolean onDelta(Map<String, Object> event) {
                return list.apply(event);
            }

            @Override
            public void onWindow(Map<String, Object> event) {
                list.moveWindow(event);
            }
        };
    }

    private final LiveDeltaClient client;
    private final String id;
    private final Executor executor;
    private final Listener listener;
    private final int heartbeatTimeoutMillis;
    /**
     * The code of the {@link LiveDeltaException} an event the app could not use stops following
     * with: the server would send the same bytes again, so retrying would never end.
     */
    public static final String UNUSABLE_EVENT = "unusable_event";

    private volatile boolean running;
    private volatile Thread thread;
    /** Guards the connection under way: which one it is, and what it takes from the server. */
    private final Object lock = new Object();
    /** Counts connections and cuts: a connection whose number is not this one's is left behind. */
    private volatile long generation;
    private CompletableFuture<Integer> current;
    private HttpURLConnection connection;
    private volatile String lastId;
    private volatile long version = -1;
    private int failures;
    private volatile boolean reread;
    private volatile boolean longPolling;
    private volatile boolean changedRows;
    private volatile Window window;
    /** The window was moved: open the next connection at once, from the rows shown. */
    private volatile boolean moving;

    /** A follower of session {@code id}, from {@code since} (a resume token kept from before, or null). */
    public SessionFollower(LiveDeltaClient client, String id, String since, Executor executor, Listener listener) {
        this(client, id, since, executor, listener, 45_000);
    }

    SessionFollower(LiveDeltaClient client, String id, String since, Executor executor, Listener listener, int heartbeatTimeoutMillis) {
        this.client = client;
        this.id = id;
        this.executor = executor;
        this.listener = listener;
        this.heartbeatTimeoutMillis = heartbeatTimeoutMillis;
        this.lastId = since;
        // Resuming from a token: the app shows its version, and deltas chain from it.
        // A window's token also says which rows it holds: <life>.<version>~<first>-<rows>.
        String place = since == null ? null : since.split("~", 2)[0];
        if (place != null && place.matches("[0-9a-z]+\\.\\d+")) version = Long.parseLong(place.substring(place.lastIndexOf('.') + 1));
    }

    /** Follows these rows alone; call before {@link #start()} (and {@link #moveWindow} after). */
    public SessionFollower window(Window window) {
        this.window = window;
        return this;
    }

    /**
     * Follows another window (the user scrolled): the follower reconnects at once with its
     * resume token and the new window, and the server sends one delta from the rows shown to the
     * new window's, which the list dispatches like any other.
     */
    public void moveWindow(Window window) {
        if (window.equals(this.window)) return;
        this.window = window;
        moving = true;
        cut();
    }

    /**
     * Follows by long polls ({@code /changes}) instead of events, for networks whose proxies hold
     * streams back; call before {@link #start()}.
     */
    public SessionFollower longPolling(boolean on) {
        longPolling = on;
        return this;
    }

    /**
     * Has each delta of a flat session carry only the rows its {@code insert} and {@code change}
     * steps bring ({@code rows}, step by step), not the new list whole ({@code items}): the
     * fewest bytes for a long list or a scrolling window. {@link LiveList#apply} takes either;
     * a listener of its own reads {@code rows} instead of {@code items}. Call before {@link #start()}.
     */
    public SessionFollower changedRowsOnly(boolean on) {
        changedRows = on;
        return this;
    }

    /** The last event's id: give it to a new follower to resume from the version shown. */
    public String resumeToken() {
        return lastId;
    }

    /** Starts following (on a thread of its own). */
    public synchronized void start() {
        if (running) return;
        running = true;
        thread = new Thread(this::run, "livedelta-follow-" + id);
        thread.setDaemon(true);
        thread.start();
    }

    /** Stops following (for the app's onStop); a new follower resumes by {@link #resumeToken()}. */
    public synchronized void stop() {
        running = false;
        cut();
        if (thread != null) thread.interrupt();
    }

    /**
     * Leaves the connection under way behind (see {@link #connect}), and closes it off the
     * caller's thread, which is the app's main thread for {@link #stop()} and {@link #moveWindow}.
     */
    private void cut() {
        HttpURLConnection open;
        CompletableFuture<Integer> done;
        synchronized (lock) {
            generation++;
            open = connection;
            connection = null;
            done = current;
        }
        if (done != null) done.cancel(false);
        if (open != null) {
            Thread closer = new Thread(open::disconnect, "livedelta-close-" + id);
            closer.setDaemon(true);
            closer.start();
        }
    }

    private void deliver(Runnable work) {
        executor.execute(work);
    }

    /**
     * Delivers an event's callback: one that throws on it (an item the app cannot show) stops
     * following with why, instead of leaving the list behind while versions go on.
     */
    private void deliver(String type, Map<String, Object> data, Runnable work) {
        executor.execute(() -> {
            // Stopped meanwhile (by the app, or by an event before this one it could not use).
            if (!running) return;
            try {
                work.run();
            } catch (RuntimeException thrown) {
                if (!running) return;
                stop();
                listener.onStopped(unusable(type, data, thrown));
            }
        });
    }

    /** The error an event the app could not use stops following with. */
    private LiveDeltaException unusable(String type, Object data, RuntimeException cause) {
        Object brings = data instanceof Map ? ((Map<?, ?>) data).get("version") : null;
        String at = brings instanceof Number ? " at version " + brings : "";
        LiveDeltaException error = new LiveDeltaException(
                0, UNUSABLE_EVENT, "session " + id + ": the " + type + at + " could not be used (" + cause + ")", null, -1, null);
        error.initCause(cause);
        return error;
    }

    private void run() {
        boolean refreshed = false;
        while (running) {
            double wait;
            try {
                if (reread) {
                    reread = false;
                    Map<String, Object> session = client.getSession(id, window);
                    version = ((Number) session.get("version")).longValue();
                    // A window's read says where to follow it from.
                    if (session.get("token") instanceof String) lastId = (String) session.get("token");
                    deliver(() -> listener.onReset(session));
                }
                deliver(() -> listener.onState("connecting"));
                int status = connect(refreshed);
                if (moving) {
                    moving = false;
                    continue;
                }
                if (status == 401 && !refreshed && client.tokens != null) {
                    refreshed = true;
                    client.token(true);
                    continue;
                }
                refreshed = false;
                wait = Backoff.delay(failures++, 1000, 32_000);
            } catch (LiveDeltaException error) {
                if (!error.isTransient()) {
                    running = false;
                    deliver(() -> listener.onStopped(error));
                    return;
                }
                wait = Math.max(error.retryAfter * 1000, Backoff.delay(failures++, 1000, 32_000));
            } catch (Shutdown shutdown) {
                wait = shutdown.delay * (1 + Math.random());
            } catch (Reread asked) {
                moving = false;
                continue;
            } catch (Ended ended) {
                running = false;
                deliver(() -> listener.onEnded(ended.reason));
                return;
            }
            if (!running) return;
            deliver(() -> listener.onState("reconnecting"));
            try {
                Thread.sleep((long) wait);
            } catch (InterruptedException interrupted) {
                return;
            }
        }
    }

    private static final class Shutdown extends Exception {
        private static final long serialVersionUID = 1;
        final double delay;

        Shutdown(double delay) {
            super(null, null, false, false);
            this.delay = delay;
        }
    }

    private static final class Reread extends Exception {
        private static final long serialVersionUID = 1;
        Reread() {
            super(null, null, false, false);
        }
    }

    private static final class Ended extends Exception {
        private static final long serialVersionUID = 1;
        final String reason;

        Ended(String reason) {
            super(null, null, false, false);
            this.reason = reason;
        }
    }

    /**
     * Runs one connection (a stream, or long polls) on a thread of its own until it ends, or
     * until the app moves the window, finds a delta that does not fit, or stops: then the
     * connection is left behind ({@link #cut()}), and nothing it reads afterwards is taken. On
     * the JDK, {@code disconnect()} waits until a read under way returns (up to a heartbeat, or
     * a poll's wait), so waiting for the connection would hold a scroll back that long.
     */
    private int connect(boolean refreshed) throws LiveDeltaException, Shutdown, Reread, Ended {
        CompletableFuture<Integer> done = new CompletableFuture<>();
        long mine;
        synchronized (lock) {
            mine = ++generation;
            current = done;
        }
        Thread reader = new Thread(() -> {
            try {
                done.complete(longPolling ? poll(refreshed, mine) : stream(refreshed, mine));
            } catch (Throwable thrown) {
                done.completeExceptionally(thrown);
            }
        }, "livedelta-read-" + id);
        reader.setDaemon(true);
        reader.start();
        try {
            return done.get();
        } catch (CancellationException | InterruptedException cut) {
            if (running && (reread || moving)) throw new Reread();
            return 200;
        } catch (ExecutionException failed) {
            Throwable cause = failed.getCause();
            if (cause instanceof LiveDeltaException) throw (LiveDeltaException) cause;
            if (cause instanceof Shutdown) throw (Shutdown) cause;
            if (cause instanceof Reread) throw (Reread) cause;
            if (cause instanceof Ended) throw (Ended) cause;
            if (cause instanceof RuntimeException) throw (RuntimeException) cause;
            throw (Error) cause;
        } finally {
            synchronized (lock) {
                if (current == done) current = null;
            }
        }
    }

    /** Whether connection {@code mine} is still the one followed (not left behind by a cut). */
    private boolean following(long mine) {
        return running && generation == mine;
    }

    /**
     * Opens {@code route} (events or long polls) from the last event id, with the token and a
     * read timeout (the watchdog): the connection where it answered 200; null after a first 401
     * (ask for a new token and open again); throws what any other answer says.
     */
    private HttpURLConnection open(String route, String extra, int readTimeout, String accept, boolean refreshed, long mine) throws IOException, LiveDeltaException, Reread {
        Window asked = window;
        String query = "?format=sequential" + (changedRows ? "&rows=changed" : "") + (asked != null ? asked.query() : "") + extra + (lastId != null ? "&since=" + URLEncoder.encode(lastId, "UTF-8") : "");
        HttpURLConnection open = (HttpURLConnection) new URL(client.baseURL + LiveDeltaClient.sessionPath(id, route) + query).openConnection();
        synchronized (lock) {
            // Cut before it opened: the next one asks for what the app wants now.
            if (generation != mine) throw new Reread();
            connection = open;
        }
        open.setConnectTimeout(10_000);
        open.setReadTimeout(readTimeout);
        open.setRequestProperty("Accept", accept);
        String token = client.token(false);
        if (token != null) open.setRequestProperty("Authorization", "Bearer " + token);
        int status = open.getResponseCode();
        if (status == 200) {
            deliver(() -> listener.onState("live"));
            return open;
        }
        String text = LiveDeltaClient.read(open.getErrorStream());
        String retryAfter = open.getHeaderField("Retry-After");
        open.disconnect();
        if (status == 401 && !refreshed && client.tokens != null) return null;
        throw LiveDeltaClient.error(status, text, retryAfter, null);
    }

    /** What a broken connection means: nothing when stopping, a fresh read when the app asked for one, else a retry. */
    private LiveDeltaException broken(IOException failure) throws Reread {
        if (reread || moving) throw new Reread();
        return new LiveDeltaException(0, "network_error", "the connection broke: " + failure, null, -1, null);
    }

    /** One stream, read until it ends; 401 where it was refused first (ask for a new token). */
    private int stream(boolean refreshed, long mine) throws LiveDeltaException, Shutdown, Reread, Ended {
        HttpURLConnection open = null;
        try {
            // The watchdog: a stream silent this long (the server's heartbeat comes every 15 s) is dropped.
            open = open("/events", "", heartbeatTimeoutMillis, "text/event-stream", refreshed, mine);
            if (open == null) return 401;
            BufferedReader reader = new BufferedReader(new InputStreamReader(open.getInputStream(), StandardCharsets.UTF_8));
            String type = "", eventId = null;
            StringBuilder data = new StringBuilder();
            for (String line; following(mine) && (line = reader.readLine()) != null; ) {
                if (line.isEmpty()) {
                    if (data.length() > 0) handle(type.isEmpty() ? "message" : type, eventId, data.toString(), mine);
                    type = "";
                    eventId = null;
                    data.setLength(0);
                } else if (!line.startsWith(":")) {
                    int colon = line.indexOf(':');
                    String field = colon < 0 ? line : line.substring(0, colon);
                    String value = colon < 0 ? "" : line.substring(colon + 1);
                    if (value.startsWith(" ")) value = value.substring(1);
                    if (field.equals("event")) type = value;
                    else if (field.equals("id")) eventId = value;
                    else if (field.equals("data")) data.append(data.length() > 0 ? "\n" : "").append(value);
                }
            }
            return 200;
        } catch (SocketTimeoutException silent) {
            return 200;
        } catch (IOException failure) {
            if (!following(mine)) return 200;
            throw broken(failure);
        } finally {
            closed(open, mine);
        }
    }

    /** Closes a connection that ended, on the thread that read it. */
    private void closed(HttpURLConnection open, long mine) {
        if (open != null) open.disconnect();
        synchronized (lock) {
            if (generation == mine) connection = null;
        }
    }

    /** Long polls until one fails or the session ends; 401 where one was refused first. */
    @SuppressWarnings("unchecked")
    private int poll(boolean refreshed, long mine) throws LiveDeltaException, Shutdown, Reread, Ended {
        while (following(mine)) {
            HttpURLConnection open = null;
            try {
                // A poll answers within its wait (20 s); past that and the watchdog's grace it is
                // given up. A scroll does not wait for it: the poll is left behind (see connect).
                open = open("/changes", "&wait=20", 20_000 + heartbeatTimeoutMillis, "application/json", refreshed, mine);
                if (open == null) return 401;
                Map<String, Object> page = (Map<String, Object>) Json.parse(LiveDeltaClient.read(open.getInputStream()));
                for (Object raw : (java.util.List<Object>) page.get("events")) {
                    Map<String, Object> event = (Map<String, Object>) raw;
                    handle((String) event.get("event"), (String) event.get("id"), (Map<String, Object>) event.get("data"), mine);
                }
                if (page.get("next") == null) throw new Ended("closed");
                synchronized (lock) {
                    if (generation == mine) lastId = (String) page.get("next");
                }
            } catch (IOException failure) {
                if (!following(mine)) return 200;
                throw broken(failure);
            } finally {
                closed(open, mine);
            }
        }
        return 200;
    }

    @SuppressWarnings("unchecked")
    private void handle(String type, String eventId, String text, long mine) throws LiveDeltaException, Shutdown, Reread, Ended {
        Map<String, Object> data;
        try {
            data = (Map<String, Object>) Json.parse(text);
        } catch (RuntimeException malformed) {
            throw unusable(type, null, malformed);
        }
        handle(type, eventId, data, mine);
    }

    /** Takes one event; one whose data is not what its type says stops following (never retried). */
    private void handle(String type, String eventId, Map<String, Object> data, long mine) throws LiveDeltaException, Shutdown, Reread, Ended {
        // Left behind: what it reads now is no longer this follower's.
        if (generation != mine) throw new Reread();
        if (type.equals("expired")) {
            // Asked for outside the lock, which the app's thread takes to cut.
            try {
                client.token(true);
            } catch (LiveDeltaException ignored) {
                // The next connection asks again, and a refusal stops it.
            }
            throw new Shutdown(0);
        }
        synchronized (lock) {
            if (generation != mine) throw new Reread();
            try {
                take(type, eventId, data);
            } catch (RuntimeException malformed) {
                throw unusable(type, data, malformed);
            }
        }
    }

    private void take(String type, String eventId, Map<String, Object> data) throws Shutdown, Reread, Ended {
        switch (type) {
            case "reset": {
                lastId = eventId != null ? eventId : lastId;
                version = ((Number) data.get("version")).longValue();
                failures = 0;
                deliver(type, data, () -> listener.onReset(data));
                return;
            }
            case "delta": {
                long next = ((Number) data.get("version")).longValue();
                long base = ((Number) data.get("baseVersion")).longValue();
                lastId = eventId != null ? eventId : lastId;
                // (A window's scroll at the same version starts from that version: not given yet.)
                if (version >= 0 && next <= version && base != version) return;
                if (version < 0 || base != version || !(data.get("sequential") instanceof java.util.List)) {
                    reread = true;
                    throw new Reread();
                }
                version = next;
                failures = 0;
                deliver(type, data, () -> {
                    if (!listener.onDelta(data)) {
                        // It did not fit what the app shows: read the session afresh.
                        reread = true;
                        cut();
                    }
                });
                return;
            }
            case "window": {
                long next = ((Number) data.get("version")).longValue();
                long base = ((Number) data.get("baseVersion")).longValue();
                lastId = eventId != null ? eventId : lastId;
                if (base != version) {
                    reread = true;
                    throw new Reread();
                }
                version = next;
                deliver(type, data, () -> listener.onWindow(data));
                return;
            }
            case "end":
                throw new Ended(String.valueOf(data.get("reason")));
            case "shutdown": {
                Object retry = data.get("retry");
                throw new Shutdown(retry instanceof Number ? ((Number) retry).doubleValue() : 1000);
            }
            default:
        }
    }
}
