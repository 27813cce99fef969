package io.trafka.javaclients;

import org.apache.kafka.streams.KafkaStreams;

/**
 * One `exactly_once_v2` word-count instance in a JVM of its own, for StreamsScenariosTest to kill:
 * `StreamsInstance BOOTSTRAP APP_ID INPUT OUTPUT` runs until the process ends, printing its state changes.
 */
public final class StreamsInstance {
    private StreamsInstance() {}

    public static void main(String[] args) throws Exception {
        KafkaStreams streams = StreamsScenariosTest.exactlyOnceWordCount(args[0], args[1], args[2], args[3]);
        streams.setStateListener((now, before) -> {
            System.out.println("state " + before + " -> " + now);
            System.out.flush();
        });
        streams.start();
        Thread.sleep(Long.MAX_VALUE);
    }
}
