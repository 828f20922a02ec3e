package com.livedelta.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Every call against the real binary; a write sent twice with its key is committed once. */
class ClientTest {
    static Servers.Server server;
    static LiveDeltaClient client;

    @BeforeAll
    static void start() throws Exception {
        server = new Servers.Server();
        client = new LiveDeltaClient(server.url(), null);
    }

    @AfterAll
    static void stop() throws Exception {
        server.stop();
    }

    static Map<String, Object> item(long id, String title) {
        return Json.object("id", id, "title", title);
    }

    @Test
    void everyCall() throws Exception {
        Map<String, Object> diff = client.diff(List.of(item(1, "Alien"), item(2, "Brazil")), List.of(item(2, "Brazil"), item(1, "Alien")),
            Json.object("format", "sequential"));
        assertEquals(List.of(Json.object("op", "move", "from", 0L, "to", 1L)), diff.get("sequential"));
        Map<String, Object> created = client.createSession(List.of(item(1, "Ann")), null, null);
        assertEquals(0L, created.get("version"));
        client.putSession("android", List.of(item(1, "Ann"), item(2, "Bob")), null);
        Map<String, Object> updated = client.update("android", List.of(item(2, "Bob"), item(1, "Ann")), 0L, null);
        assertEquals(1L, updated.get("version"));
        client.append("android", List.of(item(3, "Cy")), null, null);
        Map<String, Object> preview = client.delta("android", List.of(item(3, "Cy")), null);
        assertEquals(2L, preview.get("baseVersion"));
        client.changes("android", List.of(Json.object("op", "remove", "id", 3L)), 2L, null);
        client.patch("android", List.of(Json.object("op", "replace", "path", "/0/title", "value", "Bobby")), null, null);
        Map<String, Object> session = client.getSession("android");
        assertEquals(4L, session.get("version"));
        assertEquals(List.of(item(2, "Bobby"), item(1, "Ann")), session.get("items"));
        LiveDeltaException stale = assertThrows(LiveDeltaException.class, () -> client.update("android", List.of(), 1L, null));
        assertEquals(412, stale.status);
        assertEquals("version_mismatch", stale.code);
        assertFalse(stale.isTransient());
        Map<String, Object> shelf = client.putSession("android-shelf",
            new LiveDeltaClient.SectionsOf(List.of(Json.object("id", "a", "title", "A", "items", List.of(item(1, "x"))))), null);
        assertEquals(1L, shelf.get("sectionCount"));
        client.deleteSession("android", 4L);
        LiveDeltaException gone = assertThrows(LiveDeltaException.class, () -> client.getSession("android"));
        assertEquals(404, gone.status);
    }

    @Test
    void aWriteSentTwiceWithItsKeyIsCommittedOnce() throws Exception {
        client.putSession("android-once", List.of(), null);
        Map<String, Object> first = client.append("android-once", List.of(item(1, "a")), null, "key-1");
        Map<String, Object> again = client.append("android-once", List.of(item(1, "a")), null, "key-1");
        assertEquals(first, again);
        Map<String, Object> session = client.getSession("android-once");
        assertEquals(1L, session.get("version"));
        assertTrue(((List<?>) session.get("items")).size() == 1);
    }
}
