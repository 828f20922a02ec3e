package com.livedelta.client;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A LiveDelta server: every call of the API on {@link HttpURLConnection} (which Android has),
 * JSON in and out as plain Java values ({@link Json}), {@code If-Match}, and an
 * {@code Idempotency-Key} on every write, the same on its retries, so that a write whose answer
 * was lost is sent again safely (the server answers the retry with the first answer).
 * Blocking: call it off the main thread.
 */
public final class LiveDeltaClient {
    /** Gives the bearer token; asked again with {@code refresh} true after a 401. */
    public interface TokenProvider {
        String token(boolean refresh) throws Exception;
    }

    final String baseURL;
    final TokenProvider tokens;
    private final int retries;
    private volatile String token;

    /** A client of the server at {@code baseURL} ({@code https://deltas.example.com}); {@code tokens} may be null. */
    public LiveDeltaClient(String baseURL, TokenProvider tokens) {
        this(baseURL, tokens, 2);
    }

    /** As above, trying a failed connection, a 408/429/503 or a keyed write's 504 {@code retries} more times. */
    public LiveDeltaClient(String baseURL, TokenProvider tokens, int retries) {
        this.baseURL = baseURL.replaceAll("/+$", "");
        this.tokens = tokens;
        this.retries = retries;
    }

    String token(boolean refresh) throws LiveDeltaException {
        if (tokens == null) return null;
        if (!refresh && token != null) return token;
        try {
            token = tokens.token(refresh);
            return token;
        } catch (Exception failure) {
            throw new LiveDeltaException(0, "token_unavailable", "the token provider failed: " + failure, null, -1, null);
        }
    }

    static String sessionPath(String id, String route) {
        try {
            return "/sessions/" + URLEncoder.encode(id, "UTF-8").replace("+", "%20") + route;
        } catch (IOException impossible) {
            throw new IllegalStateException(impossible);
        }
    }

    /** One answer: its status, the version its ETag names (-1 where none), its body. */
    public static final class Answer {
        public final int status;
        public final long version;
        public final Object body;

        Answer(int status, long version, Object body) {
            this.status = status;
            this.version = version;
            this.body = body;
        }

        /** The body as an object. */
        @SuppressWarnings("unchecked")
        public Map<String, Object> object() {
            return (Map<String, Object>) body;
        }
    }

    /**
     * Sends one call: the token (asked again once after a 401), a key on writes, and retries
     * with a jittered back-off ({@code Retry-After} as a floor) where the connection failed,
     * the server refused before doing anything (408, 429, 503), or it cannot tell whether a
     * write took effect (504 {@code outcome_unknown}: retried only with the call's key, which
     * answers the retry).
     */
    public Answer send(String method, String path, Object body, String contentType, Long ifMatch, String idempotencyKey)
        throws LiveDeltaException {
        boolean write = !method.equals("GET");
        String key = write ? (idempotencyKey != null ? idempotencyKey : UUID.randomUUID().toString()) : null;
        byte[] bytes = body == null ? null : (body instanceof String ? (String) body : Json.write(body)).getBytes(StandardCharsets.UTF_8);
        boolean refreshed = false;
        for (int attempt = 0; ; attempt++) {
            HttpURLConnection connection = null;
            try {
                connection = (HttpURLConnection) new URL(baseURL + path).openConnection();
                connection.setRequestMethod(method);
                connection.setConnectTimeout(10_000);
                connection.setReadTimeout(30_000);
                connection.setRequestProperty("Accept", "application/json");
                if (key != null) connection.setRequestProperty("Idempotency-Key", key);
                if (ifMatch != null) connection.setRequestProperty("If-Match", "\"" + ifMatch + "\"");
                String bearer = token(false);
                if (bearer != null) connection.setRequestProperty("Authorization", "Bearer " + bearer);
                if (bytes != null) {
                    connection.setDoOutput(true);
                    connection.setRequestProperty("Content-Type", contentType);
                    connection.setFixedLengthStreamingMode(bytes.length);
                    try (OutputStream out = connection.getOutputStream()) {
                        out.write(bytes);
                    }
                }
                int status = connection.getResponseCode();
                String text = read(status >= 400 ? connection.getErrorStream() : connection.getInputStream());
                if (status == 401 && tokens != null && !refreshed) {
                    refreshed = true;
                    token(true);
                    attempt--;
                    continue;
                }
                if (status >= 400) {
                    LiveDeltaException error = error(status, text, connection.getHeaderField("Retry-After"), key);
                    boolean nothingDone = status == 408 || status == 429 || status == 503;
                    boolean unknown = status == 504 && (key != null || !write);
                    if ((nothingDone || unknown) && attempt < retries) {
                        sleep(Math.max(error.retryAfter * 1000, Backoff.delay(attempt, 250, 4000)));
                        continue;
                    }
                    throw error;
                }
                String tag = connection.getHeaderField("ETag");
                long version = tag != null && tag.matches("\"\\d+\"") ? Long.parseLong(tag.substring(1, tag.length() - 1)) : -1;
                return new Answer(status, version, text.isEmpty() ? null : Json.parse(text));
            } catch (IOException failure) {
                if (attempt >= retries) throw new LiveDeltaException(0, "network_error", method + " " + path + ": " + failure, null, -1, key);
                sleep(Backoff.delay(attempt, 250, 4000));
            } finally {
                if (connection != null) connection.disconnect();
            }
        }
    }

    static String read(InputStream in) throws IOException {
        if (in == null) return "";
        try (InputStream stream = in) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] buffer = new byte[16_384];
            for (int count; (count = stream.read(buffer)) > 0; ) out.write(buffer, 0, count);
            return out.toString("UTF-8");
        }
    }

    @SuppressWarnings("unchecked")
    static LiveDeltaException error(int status, String text, String retryAfter, String key) {
        Map<String, Object> detail = null;
        try {
            detail = (Map<String, Object>) ((Map<String, Object>) Json.parse(text)).get("error");
        } catch (RuntimeException notJson) {
            // A proxy's page: the status says what there is to say.
        }
        double wait = -1;
        try {
            if (retryAfter != null) wait = Double.parseDouble(retryAfter.trim());
        } catch (NumberFormatException ignored) {
            // An HTTP date: the back-off decides.
        }
        return new LiveDeltaException(
            status, detail != null ? (String) detail.get("code") : "http_" + status,
            detail != null ? (String) detail.get("message") : "HTTP " + status, detail != null ? (String) detail.get("pointer") : null, wait, key);
    }

    static void sleep(double milliseconds) throws LiveDeltaException {
        try {
            Thread.sleep((long) milliseconds);
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw new LiveDeltaException(0, "interrupted", "interrupted", null, -1, null);
        }
    }

    /** A body holding `collection`: a list of items, or {@link SectionsOf} sections. */
    private static Map<String, Object> collection(Object collection, Map<String, Object> options) {
        Map<String, Object> body =
            collection instanceof SectionsOf ? Json.object("sections", ((SectionsOf) collection).sections) : Json.object("items", collection);
        if (options != null) body.put("options", options);
        return body;
    }

    /** {@code POST /diff}: the delta between two collections (lists of items, or of sections). */
    public Map<String, Object> diff(Object oldCollection, Object newCollection, Map<String, Object> options) throws LiveDeltaException {
        Map<String, Object> body = Json.object("old", wrap(oldCollection), "new", wrap(newCollection));
        if (options != null) body.put("options", options);
        return send("POST", "/diff", body, "application/json", null, null).object();
    }

    private static Object wrap(Object collection) {
        return collection instanceof SectionsOf ? Json.object("sections", ((SectionsOf) collection).sections) : collection;
    }

    /** Sections to send where a collection is taken: {@code new SectionsOf(list of section maps)}. */
    public static final class SectionsOf {
        public final List<Object> sections;

        public SectionsOf(List<Object> sections) {
            this.sections = sections;
        }
    }

    /** {@code POST /sessions}: a session with an id the server picks. */
    public Map<String, Object> createSession(Object collection, Map<String, Object> options, String idempotencyKey) throws LiveDeltaException {
        return send("POST", "/sessions", collection(collection, options), "application/json", null, idempotencyKey).object();
    }

    /** {@code PUT /sessions/{id}}: creates the session, or replaces it at version 0. */
    public Map<String, Object> putSession(String id, Object collection, Map<String, Object> options) throws LiveDeltaException {
        return send("PUT", sessionPath(id, ""), collection(collection, options), "application/json", null, null).object();
    }

    /** {@code GET /sessions/{id}}. */
    public Map<String, Object> getSession(String id) throws LiveDeltaException {
        return send("GET", sessionPath(id, ""), null, null, null, null).object();
    }

    /**
     * {@code GET /sessions/{id}} of a window: its rows ({@code items}), where they are
     * ({@code window}: offset, count, total) and the {@code token} to follow it from.
     */
    public Map<String, Object> getSession(String id, Window window) throws LiveDeltaException {
        if (window == null) return getSession(id);
        return send("GET", sessionPath(id, "") + "?" + window.query().substring(1), null, null, null, null).object();
    }

    /** {@code POST /sessions/{id}/update}; {@code ifMatch} and {@code idempotencyKey} may be null. */
    public Map<String, Object> update(String id, Object collection, Long ifMatch, String idempotencyKey) throws LiveDeltaException {
        return send("POST", sessionPath(id, "/update"), collection(collection, null), "application/json", ifMatch, idempotencyKey).object();
    }

    /** {@code POST /sessions/{id}/append}. */
    public Map<String, Object> append(String id, Object collection, Long ifMatch, String idempotencyKey) throws LiveDeltaException {
        return send("POST", sessionPath(id, "/append"), collection(collection, null), "application/json", ifMatch, idempotencyKey).object();
    }

    /** {@code POST /sessions/{id}/delta}: the delta an update would answer, committing nothing. */
    public Map<String, Object> delta(String id, Object collection, Map<String, Object> options) throws LiveDeltaException {
        return send("POST", sessionPath(id, "/delta"), collection(collection, options), "application/json", null, null).object();
    }

    /** {@code POST /sessions/{id}/changes} with keyed operations. */
    public Map<String, Object> changes(String id, List<Object> operations, Long ifMatch, String idempotencyKey) throws LiveDeltaException {
        return send("POST", sessionPath(id, "/changes"), Json.object("operations", operations), "application/json", ifMatch, idempotencyKey).object();
    }

    /** {@code POST /sessions/{id}/changes} with an RFC 6902 patch. */
    public Map<String, Object> patch(String id, List<Object> patch, Long ifMatch, String idempotencyKey) throws LiveDeltaException {
        return send("POST", sessionPath(id, "/changes"), patch, "application/json-patch+json", ifMatch, idempotencyKey).object();
    }

    /** {@code DELETE /sessions/{id}}. */
    public void deleteSession(String id, Long ifMatch) throws LiveDeltaException {
        send("DELETE", sessionPath(id, ""), null, null, ifMatch, null);
    }
}
