package io.trafka.javaclients;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/** Bounded waits: every loop ends with a failure naming what did not happen. */
final class Poll {
    static final Duration DEADLINE = Duration.ofSeconds(30);

    private Poll() {}

    /** Polls until `count` records arrived (more may come in the last poll). */
    static <K, V> List<ConsumerRecord<K, V>> records(Consumer<K, V> consumer, int count) {
        List<ConsumerRecord<K, V>> seen = new ArrayList<>();
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (seen.size() < count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("got " + seen.size() + " of " + count + " records: " + seen);
            }
            consumer.poll(Duration.ofMillis(100)).forEach(seen::add);
        }
        return seen;
    }

    /** Calls `step` (a poll, say) until `done` holds. */
    static void until(String what, Runnable step, BooleanSupplier done) {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            step.run();
        }
    }
}
