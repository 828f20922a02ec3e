package com.livedelta.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import androidx.recyclerview.widget.AdapterListUpdateCallback;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

/**
 * AndroidX's callbacks take a LiveList's changes through {@link ListUpdateCallback#forwardingTo}:
 * following a session from the real binary, an {@code AdapterListUpdateCallback} (a test double
 * of its documented shape) is told exactly what the library's own callback is told.
 */
class ForwardingTest {
    @Test
    void anAndroidXCallbackIsToldWhatTheLibrarysIsTold() throws Exception {
        try (Servers.Server server = new Servers.Server()) {
            LiveDeltaClient client = new LiveDeltaClient(server.url(), null);
            client.putSession("forwarded", List.of(1L, 2L, 3L), null);
            List<String> told = new ArrayList<>();
            LiveList direct = new LiveList(new ListUpdateCallback() {
                public void onInserted(int position, int count) {
                    told.add("notifyItemRangeInserted(" + position + ", " + count + ")");
                }

                public void onRemoved(int position, int count) {
                    told.add("notifyItemRangeRemoved(" + position + ", " + count + ")");
                }

                public void onMoved(int from, int to) {
                    told.add("notifyItemMoved(" + from + ", " + to + ")");
                }

                public void onChanged(int position, int count, Object payload) {
                    told.add("notifyItemRangeChanged(" + position + ", " + count + ", " + payload + ")");
                }
            });
            AdapterListUpdateCallback adapter = new AdapterListUpdateCallback();
            LiveList forwarded = new LiveList(ListUpdateCallback.forwardingTo(adapter));
            ExecutorService main = Executors.newSingleThreadExecutor();
            SessionFollower follower = new SessionFollower(client, "forwarded", null, main, new SessionFollower.Listener() {
                @Override
                public void onReset(Map<String, Object> session) {
                    direct.reset(session);
                    forwarded.reset(session);
                }

                @Override
                public boolean onDelta(Map<String, Object> event) {
                    return direct.apply(event) && forwarded.apply(event);
                }
            });
            follower.start();
            LiveListTest.await(main, () -> forwarded.version() == 0, "version 0");
            List<List<Long>> versions = List.of(List.of(3L, 1L, 4L), List.of(4L, 5L), List.of(5L, 4L, 6L, 7L), List.of());
            for (List<Long> items : versions) client.update("forwarded", items, null, null);
            LiveListTest.await(main, () -> forwarded.version() == versions.size(), "version " + versions.size());
            List<String> notified = LiveListTest.on(main, () -> new ArrayList<>(adapter.notified));
            assertFalse(notified.isEmpty());
            assertEquals(LiveListTest.on(main, () -> new ArrayList<>(told)), notified);
            follower.stop();
            main.shutdown();
        }
    }

    @Test
    void anObjectThatIsNoCallbackIsRefusedAtOnce() {
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> ListUpdateCallback.forwardingTo("a string"));
        assertEquals("java.lang.String has no public onInserted: it is not a ListUpdateCallback", refused.getMessage());
    }
}
