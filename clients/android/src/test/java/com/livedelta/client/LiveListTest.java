package com.livedelta.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * 2,000 random updates (flat and sectioned) from the real server, followed over server-sent
 * events into a LiveList whose callback enforces RecyclerView's rules: no rule broken, and the
 * rows the view shows equal GET after every version; a follow through a server kill and
 * restart (Redis) that gives every version once; an event the app cannot use stops following
 * with why, once.
 */
class LiveListTest {
    static List<Object> rows(Random random) {
        List<Object> ids = new ArrayList<>();
        for (long id = 0; id < 40; id++) ids.add(id);
        Collections.shuffle(ids, random);
        List<Object> items = new ArrayList<>();
        for (Object id : ids.subList(0, random.nextInt(26))) items.add(Json.object("id", id, "v", (long) random.nextInt(3)));
        return items;
    }

    static LiveDeltaClient.SectionsOf shelves(Random random) {
        List<Object> ids = new ArrayList<>();
        for (long id = 0; id < 7; id++) ids.add(id);
        Collections.shuffle(ids, random);
        List<Object> sections = new ArrayList<>();
        List<List<Object>> contents = new ArrayList<>();
        for (Object id : ids.subList(0, random.nextInt(7))) {
            List<Object> items = new ArrayList<>();
            contents.add(items);
            sections.add(Json.object("id", "s" + id, "title", "t" + random.nextInt(2), "items", items));
        }
        List<Object> itemIds = new ArrayList<>();
        for (long id = 0; id < 30; id++) itemIds.add(id);
        Collections.shuffle(itemIds, random);
        for (Object id : itemIds.subList(0, random.nextInt(26))) {
            if (!contents.isEmpty()) contents.get(random.nextInt(contents.size())).add(Json.object("id", id, "v", (long) random.nextInt(2)));
        }
        return new LiveDeltaClient.SectionsOf(sections);
    }

    /** Runs {@code work} on the executor (the "main thread") and returns its result. */
    static <T> T on(ExecutorService main, Supplier<T> work) throws Exception {
        return main.submit(work::get).get(10, TimeUnit.SECONDS);
    }

    static void await(ExecutorService main, Supplier<Boolean> condition, String what) throws Exception {
        long deadline = System.currentTimeMillis() + 20_000;
        while (System.currentTimeMillis() < deadline) {
            if (on(main, condition)) return;
            Thread.sleep(2);
        }
        throw new AssertionError("waited for " + what);
    }

    @Test
    void twoThousandRandomUpdatesBreakNoRecyclerViewRule() throws Exception {
        try (Servers.Server server = new Servers.Server()) {
            LiveDeltaClient client = new LiveDeltaClient(server.url(), null);
            Random random = new Random(11);
            for (boolean sectioned : new boolean[] {false, true}) {
                String id = sectioned ? "shelves" : "rows";
                Object first = sectioned ? shelves(random) : rows(random);
                client.putSession(id, first, Json.object("changes", "fields"));
                ExecutorService main = Executors.newSingleThreadExecutor();
                LiveList[] holder = new LiveList[1];
                RecyclerViewRules view = new RecyclerViewRules(() -> holder[0].rows());
                holder[0] = new LiveList(view);
                List<Long> versions = new ArrayList<>();
                SessionFollower follower = new SessionFollower(client, id, null, main, new SessionFollower.Listener() {
                    @Override
                    public void onReset(Map<String, Object> session) {
                        holder[0].reset(session);
                        view.settle();
                        versions.add(holder[0].version());
                    }

                    @Override
                    public boolean onDelta(Map<String, Object> event) {
                        boolean applied = holder[0].apply(event);
                        view.settle();
                        versions.add(holder[0].version());
                        return applied;
                    }
                });
                follower.start();
                await(main, () -> holder[0].version() == 0, "version 0");
                for (int step = 1; step <= 1000; step++) {
                    Map<String, Object> answer = client.update(id, sectioned ? shelves(random) : rows(random), null, null);
                    long version = (Long) answer.get("version");
                    await(main, () -> holder[0].version() == version, "version " + version);
                    List<LiveList.Row> expected = LiveList.rowsOf(client.getSession(id), "items");
                    List<LiveList.Row> shown = on(main, view::settle);
                    assertEquals(List.of(), on(main, () -> new ArrayList<>(view.broken)), id + " version " + version);
                    assertEquals(expected, shown, id + " version " + version);
                }
                follower.stop();
                main.shutdown();
                for (int i = 1; i < versions.size(); i++) assertEquals(versions.get(i - 1) + 1, (long) versions.get(i), id + ": every version once");
            }
        }
    }

    @Test
    void anEventTheAppCannotUseStopsFollowingWithWhyOnce() throws Exception {
        try (Servers.Server server = new Servers.Server()) {
            LiveDeltaClient client = new LiveDeltaClient(server.url(), null);
            client.putSession("unusable", List.of(Json.object("id", 1L, "title", "a")), null);
            ExecutorService main = Executors.newSingleThreadExecutor();
            List<String> titles = new ArrayList<>();
            LiveDeltaException[] stopped = new LiveDeltaException[1];
            AtomicInteger deltas = new AtomicInteger();
            // An app that shows each item's title, and cannot show a null item.
            SessionFollower follower = new SessionFollower(client, "unusable", null, main, new SessionFollower.Listener() {
                @Override
                public void onReset(Map<String, Object> session) {
                    show(session);
                }

                @Override
                public boolean onDelta(Map<String, Object> event) {
                    deltas.incrementAndGet();
                    show(event);
                    return true;
                }

                @Override
                public void onStopped(LiveDeltaException error) {
                    stopped[0] = error;
                }

                @SuppressWarnings("unchecked")
                void show(Map<String, Object> state) {
                    titles.clear();
                    for (Object item : (List<Object>) state.get("items")) titles.add(((String) ((Map<String, Object>) item).get("title")).toUpperCase());
                }
            });
            follower.start();
            await(main, () -> titles.equals(List.of("A")), "version 0");
            client.update("unusable", Arrays.asList(null, Json.object("id", 1L, "title", "a")), null, null);
            client.update("unusable", List.of(Json.object("id", 1L, "title", "b")), null, null);
            await(main, () -> stopped[0] != null, "a stop");
            assertEquals(SessionFollower.UNUSABLE_EVENT, stopped[0].code);
            assertFalse(stopped[0].isTransient());
            assertTrue(stopped[0].getMessage().startsWith("session unusable: the delta at version 1 could not be used"), stopped[0].getMessage());
            assertTrue(stopped[0].getCause() instanceof NullPointerException, String.valueOf(stopped[0].getCause()));
            // Given once, and nothing after it: following stopped there.
            assertEquals(1, (int) on(main, deltas::get));
            main.shutdown();
        }
    }

    @Test
    void longPollsGiveTheSameVersions() throws Exception {
        try (Servers.Server server = new Servers.Server()) {
            LiveDeltaClient client = new LiveDeltaClient(server.url(), null);
            client.putSession("polled", new LiveDeltaClient.SectionsOf(List.of(Json.object("id", "a", "items", List.of(1L, 2L)))), null);
            ExecutorService main = Executors.newSingleThreadExecutor();
            LiveList[] holder = new LiveList[1];
            RecyclerViewRules view = new RecyclerViewRules(() -> holder[0].rows());
            holder[0] = new LiveList(view);
            SessionFollower follower = new SessionFollower(client, "polled", null, main, SessionFollower.into(holder[0])).longPolling(true);
            follower.start();
            await(main, () -> holder[0].version() == 0, "version 0");
            for (long step = 1; step <= 10; step++) {
                client.update("polled", new LiveDeltaClient.SectionsOf(List.of(Json.object("id", step % 2 == 0 ? "a" : "b", "items", List.of(step)))), null, null);
            }
            await(main, () -> holder[0].version() == 10, "version 10");
            assertEquals(LiveList.rowsOf(client.getSession("polled"), "items"), on(main, view::settle));
            assertEquals(List.of(), on(main, () -> new ArrayList<>(view.broken)));
            follower.stop();
            main.shutdown();
        }
    }

    @Test
    void aFollowThroughAKillAndARestartGivesEveryVersionOnce() throws Exception {
        try (Servers.Redis redis = new Servers.Redis()) {
            Servers.Server server = new Servers.Server("--session-store", redis.url());
            int port = server.port;
            LiveDeltaClient client = new LiveDeltaClient(server.url(), null);
            client.putSession("restart", List.of(0L), null);
            ExecutorService main = Executors.newSingleThreadExecutor();
            List<Long> versions = new ArrayList<>();
            LiveList list = new LiveList(new ListUpdateCallback() {
                public void onInserted(int position, int count) {}
                public void onRemoved(int position, int count) {}
                public void onMoved(int from, int to) {}
                public void onChanged(int position, int count, Object payload) {}
            });
            SessionFollower follower = new SessionFollower(client, "restart", null, main, new SessionFollower.Listener() {
                @Override
                public void onReset(Map<String, Object> session) {
                    list.reset(session);
                    versions.add(list.version());
                }

                @Override
                public boolean onDelta(Map<String, Object> event) {
                    boolean applied = list.apply(event);
                    versions.add(list.version());
                    return applied;
                }
            });
            follower.start();
            await(main, () -> list.version() == 0, "version 0");
            for (long step = 1; step <= 20; step++) client.update("restart", List.of(step), null, null);
            await(main, () -> list.version() == 20, "version 20");
            server.kill();
            server = new Servers.Server(port, "--session-store", redis.url());
            for (long step = 21; step <= 40; step++) client.update("restart", List.of(step), null, null);
            await(main, () -> list.version() == 40, "version 40");
            follower.stop();
            main.shutdown();
            List<Long> expected = new ArrayList<>();
            for (long v = 0; v <= 40; v++) expected.add(v);
            assertEquals(expected, on(Executors.newSingleThreadExecutor(), () -> new ArrayList<>(versions)));
            server.stop();
        }
    }
}
