package com.livedelta.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A window of 25 rows of a 500-row session, followed into a LiveList whose callback enforces
 * RecyclerView's rules, through 30 updates around it and scrolls: no rule broken, the rows shown
 * equal the session's rows where the window says after every version, and the only reset is the
 * first (every scroll is one delta). Then: a scroll and a stop never wait for the read under way.
 */
class WindowTest {
    @org.junit.jupiter.api.Test
    void aWindowFollowsUpdatesAndScrollsWithoutBreakingARule() throws Exception {
        try (Servers.Server server = new Servers.Server()) {
            LiveDeltaClient client = new LiveDeltaClient(server.url(), null);
            // Events with the window's rows whole in each delta; events, and long polls, with
            // only the rows its steps bring.
            for (int way = 0; way < 3; way++) {
                boolean changedRows = way > 0;
                boolean polling = way == 2;
                String id = new String[] {"window", "changed-rows-window", "polled-window"}[way];
                Random random = new Random(5);
                List<Object> rows = new ArrayList<>();
                for (long row = 0; row < 500; row++) rows.add(Json.object("id", row, "v", 0L));
                client.putSession(id, rows, null);
                ExecutorService main = Executors.newSingleThreadExecutor();
                LiveList[] holder = new LiveList[1];
                RecyclerViewRules view = new RecyclerViewRules(() -> holder[0].rows());
                holder[0] = new LiveList(view);
                int[] resets = {0};
                int[] carriedRows = {0};
                SessionFollower.Listener into = SessionFollower.into(holder[0]);
                SessionFollower follower = new SessionFollower(client, id, null, main, new SessionFollower.Listener() {
                    @Override
                    public void onReset(Map<String, Object> session) {
                        resets[0]++;
                        into.onReset(session);
                        view.settle();
                    }

                    @Override
                    public boolean onDelta(Map<String, Object> event) {
                        if (event.get("rows") != null && event.get("items") == null) carriedRows[0]++;
                        boolean applied = into.onDelta(event);
                        view.settle();
                        return applied;
                    }

                    @Override
                    public void onWindow(Map<String, Object> event) {
                        into.onWindow(event);
                    }
                }).window(Window.offset(100, 25)).longPolling(polling).changedRowsOnly(changedRows);
                follower.start();
                LiveListTest.await(main, () -> holder[0].version() == 0, "version 0");
                int offset = 100;
                long nextId = 1000;
                for (int step = 1; step <= 30; step++) {
                    for (int change = 0; change < 1 + random.nextInt(3); change++) {
                        int at = Math.max(0, Math.min(rows.size() - 1, offset - 5 + random.nextInt(35)));
                        switch (random.nextInt(4)) {
                            case 0: rows.remove(at); break;
                            case 1: rows.add(at, Json.object("id", nextId++, "v", 0L)); break;
                            case 2: rows.add(Math.max(0, Math.min(rows.size() - 1, at + random.nextInt(61) - 30)), rows.remove(at)); break;
                            default: rows.set(at, Json.object("id", ((Map<?, ?>) rows.get(at)).get("id"), "v", (long) step));
                        }
                    }
                    long version = (Long) client.update(id, rows, null, null).get("version");
                    if (step % 6 == 0) {
                        offset = random.nextInt(470);
                        follower.moveWindow(Window.offset(offset, 25));
                    }
                    int expected = offset;
                    LiveListTest.await(main, () -> holder[0].version() == version && holder[0].windowOffset() == expected, id + " version " + version);
                    Map<String, Object> read = client.getSession(id, Window.offset(offset, 25));
                    assertEquals(LiveList.rowsOf(read, "items"), LiveListTest.on(main, view::settle), id + " version " + version);
                    assertEquals(List.of(), LiveListTest.on(main, () -> new ArrayList<>(view.broken)), id + " version " + version);
                }
                assertEquals(1, (int) LiveListTest.on(main, () -> resets[0]), id + ": every version and every scroll a delta");
                assertEquals(changedRows, LiveListTest.on(main, () -> carriedRows[0]) > 0, id + ": deltas carried only their rows where asked");
                follower.stop();
                main.shutdown();
            }
        }
    }

    /**
     * With no heartbeat for an hour and no watchdog to speak of, a read under way returns only
     * with the next event: on the JDK, {@code HttpURLConnection.disconnect()} waits for it. The
     * app's thread must not: {@code moveWindow} and {@code stop()} return, and the scroll is
     * shown, with nothing committed meanwhile.
     */
    @org.junit.jupiter.api.Test
    void aScrollAndAStopDoNotWaitForTheReadUnderWay() throws Exception {
        try (Servers.Server server = new Servers.Server("--heartbeat-interval", "3600")) {
            LiveDeltaClient client = new LiveDeltaClient(server.url(), null);
            List<Object> rows = new ArrayList<>();
            for (long row = 0; row < 100; row++) rows.add(Json.object("id", row, "v", 0L));
            client.putSession("quiet", rows, null);
            ExecutorService main = Executors.newSingleThreadExecutor();
            LiveList[] holder = new LiveList[1];
            RecyclerViewRules view = new RecyclerViewRules(() -> holder[0].rows());
            holder[0] = new LiveList(view);
            SessionFollower follower = new SessionFollower(client, "quiet", null, main, SessionFollower.into(holder[0]), 600_000)
                .window(Window.offset(0, 10));
            follower.start();
            LiveListTest.await(main, () -> holder[0].version() == 0 && holder[0].rows().size() == 10, "the window's reset");
            // Called on the app's thread, as an app would; each must come back.
            LiveListTest.on(main, () -> {
                follower.moveWindow(Window.offset(50, 10));
                return null;
            });
            LiveListTest.await(main, () -> holder[0].windowOffset() == 50, "the scroll, without an event on the old stream");
            assertEquals(LiveList.rowsOf(client.getSession("quiet", Window.offset(50, 10)), "items"), LiveListTest.on(main, view::settle));
            LiveListTest.on(main, () -> {
                follower.stop();
                return null;
            });
            main.shutdown();
        }
    }
}
