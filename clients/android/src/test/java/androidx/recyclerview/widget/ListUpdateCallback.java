package androidx.recyclerview.widget;

/**
 * A test double of AndroidX's interface, transcribed from its documentation (the four methods,
 * their parameters; {@code payload} is nullable), so that the forwarding adapter is tried
 * against the shape apps pass it.
 */
public interface ListUpdateCallback {
    void onInserted(int position, int count);

    void onRemoved(int position, int count);

    void onMoved(int fromPosition, int toPosition);

    void onChanged(int position, int count, Object payload);
}
