package com.livedelta.client;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A session's rows, kept equal to it event by event, each change dispatched to a
 * {@link ListUpdateCallback} in the {@code sequential} order the server gives (removals, moves,
 * insertions, changes, each on the rows as the ones before left them), so that a RecyclerView
 * adapter animates it without diffing anything on the phone.
 *
 * A sectioned session is one adapter: each section is a header row followed by its items'
 * rows ({@link Row#isHeader}), since a RecyclerView has no sections of its own and one adapter
 * keeps one set of positions; section operations become the ranges of rows they cover.
 *
 * The rows are switched to the new ones before the calls (as {@code DiffUtil} results are
 * dispatched after {@code submitList}), so an adapter reads them from {@link #rows()}. Not thread
 * safe: give it events on one thread (the follower delivers on the executor the app gives).
 */
public final class LiveList {
    /** One row of the adapter: an item, or a section's header. */
    public static final class Row {
        /** True for a section's header row. */
        public final boolean isHeader;
        /** The item, or the section's fields (its items left out). */
        public final Object value;

        Row(boolean isHeader, Object value) {
            this.isHeader = isHeader;
            this.value = value;
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Row && ((Row) other).isHeader == isHeader && java.util.Objects.equals(((Row) other).value, value);
        }

        @Override
        public int hashCode() {
            return java.util.Objects.hash(isHeader, value);
        }

        @Override
        public String toString() {
            return (isHeader ? "header " : "") + Json.write(value);
        }
    }

    private final ListUpdateCallback callback;
    private List<Row> rows = new ArrayList<>();
    private long version = -1;
    private String itemsKey = "items";
    private Map<String, Object> window;

    public LiveList(ListUpdateCallback callback) {
        this.callback = callback;
    }

    /** The rows the adapter shows. */
    public List<Row> rows() {
        return rows;
    }

    /** The version shown; -1 before the first. */
    public long version() {
        return version;
    }

    /**
     * For a window: the session's row the first of {@link #rows()} is (an adapter showing the
     * whole list with placeholders adds it to the callback's positions); 0 otherwise.
     */
    public int windowOffset() {
        return window != null && window.get("offset") instanceof Number ? ((Number) window.get("offset")).intValue() : 0;
    }

    /** For a window: the session's rows; otherwise the rows shown. */
    public int total() {
        return window != null && window.get("total") instanceof Number ? ((Number) window.get("total")).intValue() : rows.size();
    }

    /** For a window: where its rows are ({@code offset}, {@code count}, {@code total}, the anchor); null otherwise. */
    public Map<String, Object> window() {
        return window;
    }

    /** A {@code window} event: the same rows at a new version, somewhere else or among another total. */
    @SuppressWarnings("unchecked")
    public boolean moveWindow(Map<String, Object> event) {
        Object base = event.get("baseVersion");
        if (!(base instanceof Number) || ((Number) base).longValue() != version) return false;
        version = ((Number) event.get("version")).longValue();
        if (event.get("window") instanceof Map) window = (Map<String, Object>) event.get("window");
        return true;
    }

    /** The rows of a session (GET's answer, a {@code reset} event, or a delta's collection). */
    @SuppressWarnings("unchecked")
    static List<Row> rowsOf(Map<String, Object> data, String itemsKey) {
        List<Row> rows = new ArrayList<>();
        if (data.get("sections") instanceof List) {
            for (Object section : (List<Object>) data.get("sections")) {
                Map<String, Object> fields = new java.util.LinkedHashMap<>((Map<String, Object>) section);
                Object items = fields.remove(itemsKey);
                rows.add(new Row(true, fields));
                for (Object item : (List<Object>) items) rows.add(new Row(false, item));
            }
        } else if (data.get("items") instanceof List) {
            for (Object item : (List<Object>) data.get("items")) rows.add(new Row(false, item));
        }
        return rows;
    }

    /**
     * Starts again from the whole session: the old rows removed and the new inserted (a
     * RecyclerView's full refresh, as two range calls that keep its counts right).
     */
    @SuppressWarnings("unchecked")
    public void reset(Map<String, Object> session) {
        Object options = session.get("options");
        if (options instanceof Map && ((Map<String, Object>) options).get("itemsKey") instanceof String) {
            itemsKey = (String) ((Map<String, Object>) options).get("itemsKey");
        }
        int old = rows.size();
        rows = rowsOf(session, itemsKey);
        version = ((Number) session.get("version")).longValue();
        window = session.get("window") instanceof Map ? (Map<String, Object>) session.get("window") : null;
        if (old > 0) callback.onRemoved(0, old);
        if (!rows.isEmpty()) callback.onInserted(0, rows.size());
    }

    /**
     * Applies a delta event in the {@code sequential} format (it carries the new collection):
     * false, changing nothing, where it does not start at this version or does not replay to
     * the collection it carries; the follower then reads the session afresh.
     */
    @SuppressWarnings("unchecked")
    public boolean apply(Map<String, Object> event) {
        Object base = event.get("baseVersion");
        if (!(base instanceof Number) || ((Number) base).longValue() != version || !(event.get("sequential") instanceof List)) return false;
        List<Object> operations = (List<Object>) event.get("sequential");
        boolean sectioned = event.get("sections") instanceof List;
        // Only the rows the steps bring (rows=changed): the others are the ones shown.
        boolean changedRows = !sectioned && !(event.get("items") instanceof List) && event.get("rows") instanceof List;
        List<Row> next = changedRows ? placed(event, operations) : rowsOf(event, itemsKey);
        if (next == null) return false;
        List<Object[]> calls = new ArrayList<>();
        List<Row> replayed;
        try {
            replayed = sectioned ? Flattened.replay(rows, operations, next, calls) : replayFlat(rows, operations, next, calls);
        } catch (RuntimeException misfit) {
            return false;
        }
        if (changedRows ? replayed.contains(null) : !replayed.equals(next)) return false;
        rows = changedRows ? replayed : next;
        version = ((Number) event.get("version")).longValue();
        if (event.get("window") instanceof Map) window = (Map<String, Object>) event.get("window");
        for (Object[] call : calls) {
            switch ((String) call[0]) {
                case "insert": callback.onInserted((Integer) call[1], (Integer) call[2]); break;
                case "remove": callback.onRemoved((Integer) call[1], (Integer) call[2]); break;
                case "move": callback.onMoved((Integer) call[1], (Integer) call[2]); break;
                default: callback.onChanged((Integer) call[1], (Integer) call[2], call[3]);
            }
        }
        return true;
    }

    /**
     * The new rows as far as an event carrying only its steps' rows gives them: each insert
     * and change step's rows at its positions, step by step, the others null; null where the
     * rows do not match the steps.
     */
    @SuppressWarnings("unchecked")
    static List<Row> placed(Map<String, Object> event, List<Object> operations) {
        if (!(event.get("newCount") instanceof Number)) return null;
        List<Object> carried = (List<Object>) event.get("rows");
        List<Row> next = new ArrayList<>(java.util.Collections.nCopies(((Number) event.get("newCount")).intValue(), (Row) null));
        int taken = 0;
        for (Object raw : operations) {
            Map<String, Object> op = (Map<String, Object>) raw;
            if (!"insert".equals(op.get("op")) && !"change".equals(op.get("op"))) continue;
            int position = number(op, "position"), count = number(op, "count");
            for (int row = position; row < position + count; row++) {
                if (taken >= carried.size() || row < 0 || row >= next.size()) return null;
                next.set(row, new Row(false, carried.get(taken++)));
            }
        }
        return taken == carried.size() ? next : null;
    }

    static int number(Map<String, Object> op, String name) {
        return ((Number) op.get(name)).intValue();
    }

    /** A flat list's operations, each on the rows as the ones before left them. */
    @SuppressWarnings("unchecked")
    static List<Row> replayFlat(List<Row> old, List<Object> operations, List<Row> next, List<Object[]> calls) {
        List<Row> rows = new ArrayList<>(old);
        for (Object raw : operations) {
            Map<String, Object> op = (Map<String, Object>) raw;
            String kind = (String) op.get("op");
            switch (kind) {
                case "remove": {
                    int position = number(op, "position"), count = number(op, "count");
                    rows.subList(position, position + count).clear();
                    calls.add(new Object[] {"remove", position, count});
                    break;
                }
                case "move": {
                    int from = number(op, "from"), to = number(op, "to");
                    rows.add(to, rows.remove(from));
                    calls.add(new Object[] {"move", from, to});
                    break;
                }
                case "insert": {
                    int position = number(op, "position"), count = number(op, "count");
                    rows.addAll(position, next.subList(position, position + count));
                    calls.add(new Object[] {"insert", position, count});
                    break;
                }
                case "change": {
                    int position = number(op, "position"), count = number(op, "count");
                    for (int row = position; row < position + count; row++) rows.set(row, next.get(row));
                    calls.add(new Object[] {"change", position, count, op.get("payload")});
                    break;
                }
                default: throw new IllegalArgumentException("unknown operation " + kind);
            }
        }
        return rows;
    }
}
