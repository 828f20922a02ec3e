package com.livedelta.client;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * A recording ListUpdateCallback that enforces RecyclerView's rules for adapter notifications
 * (../shared/design/platform-list-rules.md): every position within the adapter's count at the
 * moment of the call (an insertion at most at the count, a removal, change or move of rows that
 * exist), counts above zero, and the count after the calls equal to the adapter's. It keeps the
 * rows the view shows: rows it was not told about keep their old content, inserted and changed
 * rows are bound from the adapter, so a wrong position shows as a row that differs.
 */
final class RecyclerViewRules implements ListUpdateCallback {
    private final Supplier<List<LiveList.Row>> adapter;
    /** What the view shows; null: to bind from the adapter. */
    private final List<LiveList.Row> shown = new ArrayList<>();
    final List<String> broken = new ArrayList<>();
    int calls;

    RecyclerViewRules(Supplier<List<LiveList.Row>> adapter) {
        this.adapter = adapter;
    }

    private void check(boolean rule, String what) {
        if (!rule) broken.add(what + " (count " + shown.size() + ")");
    }

    @Override
    public void onInserted(int position, int count) {
        calls++;
        check(count > 0 && position >= 0 && position <= shown.size(), "onInserted(" + position + ", " + count + ")");
        if (!broken.isEmpty()) return;
        for (int i = 0; i < count; i++) shown.add(position, null);
    }

    @Override
    public void onRemoved(int position, int count) {
        calls++;
        check(count > 0 && position >= 0 && position + count <= shown.size(), "onRemoved(" + position + ", " + count + ")");
        if (!broken.isEmpty()) return;
        shown.subList(position, position + count).clear();
    }

    @Override
    public void onMoved(int fromPosition, int toPosition) {
        calls++;
        check(fromPosition >= 0 && fromPosition < shown.size() && toPosition >= 0 && toPosition < shown.size(),
            "onMoved(" + fromPosition + ", " + toPosition + ")");
        if (!broken.isEmpty()) return;
        shown.add(toPosition, shown.remove(fromPosition));
    }

    @Override
    public void onChanged(int position, int count, Object payload) {
        calls++;
        check(count > 0 && position >= 0 && position + count <= shown.size(), "onChanged(" + position + ", " + count + ")");
        if (!broken.isEmpty()) return;
        for (int i = position; i < position + count; i++) shown.set(i, null);
    }

    /**
     * After a change's calls: the count must be the adapter's, and every row the view kept must
     * be the adapter's row at its place; the rest are bound now. Returns the rows shown.
     */
    List<LiveList.Row> settle() {
        List<LiveList.Row> rows = adapter.get();
        check(shown.size() == rows.size(), "the view holds " + shown.size() + " rows, the adapter " + rows.size());
        if (!broken.isEmpty()) return shown;
        for (int i = 0; i < rows.size(); i++) {
            if (shown.get(i) == null) shown.set(i, rows.get(i));
            else check(shown.get(i).equals(rows.get(i)), "row " + i + " shows " + shown.get(i) + ", the adapter holds " + rows.get(i));
        }
        return new ArrayList<>(shown);
    }
}
