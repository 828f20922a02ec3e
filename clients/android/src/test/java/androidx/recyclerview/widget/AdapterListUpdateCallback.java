package androidx.recyclerview.widget;

import java.util.ArrayList;
import java.util.List;

/**
 * A test double of AndroidX's {@code AdapterListUpdateCallback} (a public final class that
 * forwards to an adapter's notify methods): here it notes each call as the adapter would get it.
 */
public final class AdapterListUpdateCallback implements ListUpdateCallback {
    /** The calls, as {@code notifyItemRangeInserted(0, 2)} and so on. */
    public final List<String> notified = new ArrayList<>();

    @Override
    public void onInserted(int position, int count) {
        notified.add("notifyItemRangeInserted(" + position + ", " + count + ")");
    }

    @Override
    public void onRemoved(int position, int count) {
        notified.add("notifyItemRangeRemoved(" + position + ", " + count + ")");
    }

    @Override
    public void onMoved(int fromPosition, int toPosition) {
        notified.add("notifyItemMoved(" + fromPosition + ", " + toPosition + ")");
    }

    @Override
    public void onChanged(int position, int count, Object payload) {
        notified.add("notifyItemRangeChanged(" + position + ", " + count + ", " + payload + ")");
    }
}
