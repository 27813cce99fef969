package io.trafka.javaclients;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.GroupProtocol;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.junit.jupiter.api.Test;

/**
 * Kafka Streams 4.2 applications (`group.protocol=streams`, KIP-1071) through a streams group's life:
 * one instance's fatal error stops every instance (ShutdownApplication), and a word count under
 * `exactly_once_v2` scales out to three instances and back, one stopped cleanly and one killed (a JVM of
 * its own, SIGKILLed: its tasks move once its session times out), every count exactly once. The brokers'
 * streams session timeout is short for this (6 s: tests/kafka's server properties, Brokers' trafka).
 */
class StreamsScenariosTest {
    private static final int PARTITIONS = 3;

    private static Properties streamsProps(String bootstrap, String appId) throws Exception {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, GroupProtocol.STREAMS.name().toLowerCase());
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("trafka-streams-").toString());
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        props.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        return props;
    }

    static KafkaStreams exactlyOnceWordCount(String bootstrap, String appId, String input, String output)
            throws Exception {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
                .flatMapValues(line -> Arrays.asList(line.toLowerCase().split("\\s+")))
                .groupBy((key, word) -> word)
                .count(Materialized.as("counts"))
                .toStream()
                .to(output, Produced.with(Serdes.String(), Serdes.Long()));
        Properties props = streamsProps(bootstrap, appId);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        return new KafkaStreams(builder.build(), props);
    }

    /** Every count record on the output topic (read_committed), in order, per word: no count lost or repeated. */
    private static Map<String, List<Long>> readAllCounts(String output, Map<String, Long> expected) {
        Map<String, Object> config = Brokers.consumerConfig(null);
        config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, LongDeserializer.class);
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, IsolationLevel.READ_COMMITTED.toString().toLowerCase());
        Map<String, List<Long>> seen = new TreeMap<>();
        try (KafkaConsumer<String, Long> consumer = new KafkaConsumer<>(config)) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++) {
                partitions.add(new TopicPartition(output, p));
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Poll.until("the word counts " + expected + " (seen: " + seen + ")",
                    () -> consumer.poll(Duration.ofMillis(100))
                            .forEach(r -> seen.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r.value())),
                    () -> expected.keySet().stream().allMatch(word -> seen.containsKey(word)
                            && seen.get(word).get(seen.get(word).size() - 1).equals(expected.get(word))));
        }
        return seen;
    }

    private static void produceLines(String input, List<String> lines, Map<String, Long> expected) {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Brokers.producerConfig())) {
            for (int i = 0; i < lines.size(); i++) {
                producer.send(new ProducerRecord<>(input, "line" + expected.size() + "-" + i, lines.get(i)));
                for (String word : lines.get(i).toLowerCase().split("\\s+")) {
                    expected.merge(word, 1L, Long::sum);
                }
            }
            producer.flush();
        }
    }

    /** Under exactly-once every count a word goes through appears once, in order: 1, 2, ..., its total. */
    private static void assertEachCountOnce(Map<String, Long> expected, Map<String, List<Long>> seen) {
        Map<String, List<Long>> wanted = new TreeMap<>();
        expected.forEach((word, total) -> {
            List<Long> counts = new ArrayList<>();
            for (long c = 1; c <= total; c++) {
                counts.add(c);
            }
            wanted.put(word, counts);
        });
        assertEquals(wanted, seen);
    }

    private static StreamsGroupDescription awaitGroup(Admin admin, String appId, int members, int activeEach)
            throws Exception {
        return awaitGroup(admin, appId, members, activeEach, Poll.DEADLINE);
    }

    /** Waits until the group is Stable with `members` members of `activeEach` active tasks each. */
    private static StreamsGroupDescription awaitGroup(Admin admin, String appId, int members, int activeEach,
            Duration within) throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        StreamsGroupDescription group = null;
        while (System.nanoTime() < deadline) {
            try {
                group = admin.describeStreamsGroups(List.of(appId)).all().get().get(appId);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof GroupIdNotFoundException)) {
                    throw e;
                }
                Thread.sleep(100); // not created yet: its first member has not joined
                continue;
            }
            boolean done = group.groupState() == GroupState.STABLE && group.members().size() == members
                    && group.members().stream().allMatch(m -> m.assignment().activeTasks().stream()
                            .mapToInt(t -> t.partitions().size()).sum() == activeEach);
            if (done) {
                return group;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("the group never had " + members + " members of " + activeEach + " tasks: " + group);
    }

    private static void awaitState(KafkaStreams instance, KafkaStreams.State state, String what) throws Exception {
        long deadline = System.nanoTime() + Poll.DEADLINE.toNanos();
        while (instance.state() != state) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(what + " is " + instance.state() + ", not " + state);
            }
            Thread.sleep(100);
        }
    }

    @Test
    void oneInstancesFatalErrorShutsTheWholeApplicationDown() throws Exception {
        String appId = Brokers.unique("shutdown-app");
        String input = Brokers.unique("events");
        String output = Brokers.unique("passed");
        Brokers.createTopic(input, 2);
        Brokers.createTopic(output, 2);
        List<KafkaStreams> instances = new ArrayList<>();
        try (Admin admin = Brokers.admin()) {
            for (int i = 0; i < 2; i++) {
                StreamsBuilder builder = new StreamsBuilder();
                builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
                        .mapValues(value -> {
                            if (value.equals("poison")) {
                                throw new IllegalStateException("a record this application cannot process");
                            }
                            return value;
                        })
                        .to(output);
                KafkaStreams instance = new KafkaStreams(builder.build(), streamsProps(Brokers.bootstrap(), appId));
                instance.setUncaughtExceptionHandler(e -> StreamThreadExceptionResponse.SHUTDOWN_APPLICATION);
                instances.add(instance);
                instance.start();
            }
            awaitGroup(admin, appId, 2, 1);
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(Brokers.producerConfig())) {
                producer.send(new ProducerRecord<>(input, 0, "k", "poison")).get();
            }
            // The instance that failed asks for ShutdownApplication; the broker tells the other one.
            for (KafkaStreams instance : instances) {
                awaitState(instance, KafkaStreams.State.ERROR, "an instance");
            }
        } finally {
            instances.forEach(KafkaStreams::close);
        }
    }

    /** A word-count instance in a JVM of its own (StreamsInstance), so that it can be killed. */
    private static Process startInstanceProcess(String appId, String input, String output, Path log) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder builder = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                StreamsInstance.class.getName(), Brokers.bootstrap(), appId, input, output)
                .redirectErrorStream(true).redirectOutput(log.toFile());
        return builder.start();
    }

    @Test
    void anExactlyOnceWordCountScalesToThreeAndBackThroughACleanStopAndAKill() throws Exception {
        String appId = Brokers.unique("eos-scale");
        String input = Brokers.unique("lines");
        String output = Brokers.unique("counts");
        Brokers.createTopic(input, PARTITIONS);
        Brokers.createTopic(output, PARTITIONS);
        Map<String, Long> expected = new TreeMap<>();
        List<KafkaStreams> instances = new ArrayList<>();
        Process killed = null;
        try (Admin admin = Brokers.admin()) {
            produceLines(input, List.of("one two three", "two three", "three"), expected);
            for (int i = 0; i < 2; i++) {
                KafkaStreams instance = exactlyOnceWordCount(Brokers.bootstrap(), appId, input, output);
                instances.add(instance);
                instance.start();
                if (i == 0) {
                    readAllCounts(output, expected);
                }
            }
            Path log = Files.createTempFile("streams-instance-", ".log");
            killed = startInstanceProcess(appId, input, output, log);
            try {
                awaitGroup(admin, appId, 3, 2, Duration.ofSeconds(90)); // a JVM's start, on a loaded machine
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "\nthe third instance's output:\n" + Files.readString(log), e);
            }
            produceLines(input, List.of("four four four four", "one"), expected);
            readAllCounts(output, expected);

            instances.remove(1).close(); // stopped cleanly: it leaves the group at once
            awaitGroup(admin, appId, 2, PARTITIONS);
            killed.destroyForcibly().waitFor(); // SIGKILL: no leave, no more heartbeats, a transaction left open
            assertEquals(2, admin.describeStreamsGroups(List.of(appId)).all().get().get(appId).members().size());
            produceLines(input, List.of("five five five five five", "one two"), expected);
            awaitGroup(admin, appId, 1, 2 * PARTITIONS); // once its session timed out
            assertEachCountOnce(expected, readAllCounts(output, expected));
        } finally {
            if (killed != null) {
                killed.destroyForcibly();
            }
            instances.forEach(KafkaStreams::close);
        }
    }
}
