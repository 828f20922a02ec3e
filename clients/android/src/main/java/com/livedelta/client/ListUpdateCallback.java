package com.livedelta.client;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

/**
 * What a list view is told of a change, shaped as AndroidX's
 * {@code androidx.recyclerview.widget.ListUpdateCallback}. To hand the changes to AndroidX's own
 * callbacks (an {@code AdapterListUpdateCallback}, anything a {@code DiffUtil} result would be
 * dispatched to), wrap one: {@code ListUpdateCallback.forwardingTo(new
 * AdapterListUpdateCallback(adapter))}.
 */
public interface ListUpdateCallback {
    void onInserted(int position, int count);

    void onRemoved(int position, int count);

    void onMoved(int fromPosition, int toPosition);

    /** {@code payload}: the changed fields ({@code {"set": {...}, "removed": [...]}}) where the session sends them, else null. */
    void onChanged(int position, int count, Object payload);

    /**
     * A callback that forwards each call to {@code target}, an object with AndroidX's
     * {@code ListUpdateCallback} methods (an {@code AdapterListUpdateCallback}). The library
     * depends on nothing of AndroidX, so the four methods are found by name and signature, once,
     * here: a target without them is refused at once, not at the first change.
     *
     * @throws IllegalArgumentException where {@code target} lacks one of the four methods
     */
    static ListUpdateCallback forwardingTo(Object target) {
        Class<?> type = target.getClass();
        Method inserted = Forwarding.method(type, "onInserted", int.class, int.class);
        Method removed = Forwarding.method(type, "onRemoved", int.class, int.class);
        Method moved = Forwarding.method(type, "onMoved", int.class, int.class);
        Method changed = Forwarding.method(type, "onChanged", int.class, int.class, Object.class);
        return new ListUpdateCallback() {
            @Override
            public void onInserted(int position, int count) {
                Forwarding.call(inserted, target, position, count);
            }

            @Override
            public void onRemoved(int position, int count) {
                Forwarding.call(removed, target, position, count);
            }

            @Override
            public void onMoved(int fromPosition, int toPosition) {
                Forwarding.call(moved, target, fromPosition, toPosition);
            }

            @Override
            public void onChanged(int position, int count, Object payload) {
                Forwarding.call(changed, target, position, count, payload);
            }
        };
    }
}

/** The reflection behind {@link ListUpdateCallback#forwardingTo}. */
final class Forwarding {
    private Forwarding() {}

    static Method method(Class<?> type, String name, Class<?>... parameters) {
        try {
            Method method = type.getMethod(name, parameters);
            // A public method of a class that is not (a lambda's, an anonymous class's): callable
            // all the same.
            method.setAccessible(true);
            return method;
        } catch (NoSuchMethodException missing) {
            throw new IllegalArgumentException(type.getName() + " has no public " + name + ": it is not a ListUpdateCallback", missing);
        }
    }

    static void call(Method method, Object target, Object... arguments) {
        try {
            method.invoke(target, arguments);
        } catch (InvocationTargetException thrown) {
            Throwable cause = thrown.getCause();
            if (cause instanceof RuntimeException) throw (RuntimeException) cause;
            if (cause instanceof Error) throw (Error) cause;
            throw new IllegalStateException(cause);
        } catch (IllegalAccessException refused) {
            throw new IllegalStateException(refused);
        }
    }
}
