package io.trafka.javaclients;

import org.apache.kafka.streams.KafkaStreams;

/**
 * One `exactly_once_v2` word-count instance in a JVM of its own, for StreamsScenariosTest to kill:
 * `StreamsInstance BOOTSTRAP APP_ID INPUT OUTPUT` prints {@link #RUNNING} once its tasks run, then runs
 * until the process ends.
 */
public final class StreamsInstance {
    static final String RUNNING = "instance running";

    private StreamsInstance() {}

    public static void main(String[] args) throws Exception {
        KafkaStreams streams = StreamsScenariosTest.exactlyOnceWordCount(args[0], args[1], args[2], args[3]);
        streams.setStateListener((now, before) -> {
            if (now == KafkaStreams.State.RUNNING) {
                System.out.println(RUNNING);
                System.out.flush();
            }
        });
        streams.start();
        Thread.sleep(Long.MAX_VALUE);
    }
}
