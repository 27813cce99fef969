package io.trafka.javaclients;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.admin.StreamsGroupMemberDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.GroupProtocol;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.junit.jupiter.api.Test;

/**
 * trafka restarted under a running Kafka Streams application (two instances, `exactly_once_v2`): the
 * streams group comes back from `__consumer_offsets` with its epochs, members and assignment, and the
 * word counts go on with no count lost or repeated. trafka only (its own broker on a data dir, stopped
 * and started again on the same port): the session's Apache Kafka cannot be restarted under the other
 * suites. Not a `*Test`: tests/java/test_java_suite.py runs it once, by name.
 */
class StreamsBrokerRestartScenario {
    private static final int PARTITIONS = 2;

    private static KafkaStreams wordCount(String bootstrap, String appId, String input, String output) throws Exception {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
                .flatMapValues(line -> Arrays.asList(line.toLowerCase().split("\\s+")))
                .groupBy((key, word) -> word)
                .count(Materialized.as("counts"))
                .toStream()
                .to(output, Produced.with(Serdes.String(), Serdes.Long()));
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, GroupProtocol.STREAMS.name().toLowerCase());
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("trafka-streams-").toString());
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        props.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        return new KafkaStreams(builder.build(), props);
    }

    private static Admin admin(String bootstrap) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return Admin.create(props);
    }

    private static void produceLines(String bootstrap, String input, List<String> lines, Map<String, Long> expected) {
        Map<String, Object> config = new HashMap<>();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(config)) {
            for (int i = 0; i < lines.size(); i++) {
                producer.send(new ProducerRecord<>(input, "line" + expected.size() + "-" + i, lines.get(i)));
                for (String word : lines.get(i).toLowerCase().split("\\s+")) {
                    expected.merge(word, 1L, Long::sum);
                }
            }
            producer.flush();
        }
    }

    /** Every count on the output topic (read_committed) per word, read until each word reached its total. */
    private static Map<String, List<Long>> readAllCounts(String bootstrap, String output, Map<String, Long> expected) {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, LongDeserializer.class);
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
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

    /** The group's epoch and each member's epoch and active tasks, once it is Stable with `members` members. */
    private static String stableShape(Admin admin, String appId, int members) throws Exception {
        long deadline = System.nanoTime() + Poll.DEADLINE.toNanos();
        StreamsGroupDescription group = null;
        while (System.nanoTime() < deadline) {
            group = admin.describeStreamsGroups(List.of(appId)).all().get().get(appId);
            if (group.groupState() == GroupState.STABLE && group.members().size() == members) {
                return "epoch " + group.groupEpoch() + " " + group.members().stream()
                        .sorted((a, b) -> a.memberId().compareTo(b.memberId()))
                        .map(StreamsBrokerRestartScenario::memberShape)
                        .collect(Collectors.joining("; "));
            }
            Thread.sleep(100);
        }
        throw new AssertionError("the group never was Stable with " + members + " members: " + group);
    }

    private static String memberShape(StreamsGroupMemberDescription m) {
        String tasks = m.assignment().activeTasks().stream()
                .sorted((a, b) -> a.subtopologyId().compareTo(b.subtopologyId()))
                .map(t -> t.subtopologyId() + ":" + new java.util.TreeSet<>(t.partitions()))
                .collect(Collectors.joining(","));
        return m.memberId() + "@" + m.memberEpoch() + " " + tasks;
    }

    @Test
    void aRestartedBrokerKeepsTheGroupAndTheCountsGoOnExactly() throws Exception {
        String python = System.getProperty("trafka.python", "python3");
        Path dataDir = Files.createTempDirectory("trafka-restart-");
        Path config = Files.createTempFile("trafka-", ".properties");
        Files.writeString(config, "group.streams.session.timeout.ms=6000\ngroup.streams.heartbeat.interval.ms=1000\n");
        Trafka broker = Trafka.startOn(python, dataDir, 0, config.toString());
        int port = broker.port();
        String bootstrap = broker.bootstrapServers();
        List<KafkaStreams> instances = new ArrayList<>();
        try {
            try (Admin admin = admin(bootstrap)) {
                admin.createTopics(List.of(new NewTopic("lines", PARTITIONS, (short) 1),
                        new NewTopic("counts", PARTITIONS, (short) 1))).all().get();
            }
            Map<String, Long> expected = new TreeMap<>();
            produceLines(bootstrap, "lines", List.of("one two three", "two three", "three"), expected);
            for (int i = 0; i < 2; i++) {
                KafkaStreams instance = wordCount(bootstrap, "restart-app", "lines", "counts");
                instances.add(instance);
                instance.start();
            }
            readAllCounts(bootstrap, "counts", expected);
            String before;
            try (Admin admin = admin(bootstrap)) {
                before = stableShape(admin, "restart-app", 2);
            }

            broker.close(); // SIGTERM: a graceful stop, as an operator restarts a broker
            broker = Trafka.startOn(python, dataDir, port, config.toString());
            try (Admin admin = admin(bootstrap)) {
                // the group as it was: its epoch, its members with their epochs and tasks
                assertEquals(before, stableShape(admin, "restart-app", 2));
            }
            produceLines(bootstrap, "lines", List.of("four four four four", "one two"), expected);
            Map<String, List<Long>> seen = readAllCounts(bootstrap, "counts", expected);
            Map<String, List<Long>> once = new TreeMap<>();
            expected.forEach((word, total) -> {
                List<Long> counts = new ArrayList<>();
                for (long c = 1; c <= total; c++) {
                    counts.add(c);
                }
                once.put(word, counts);
            });
            assertEquals(once, seen); // every count once, in order: none lost, none repeated
            try (Admin admin = admin(bootstrap)) {
                assertEquals(before, stableShape(admin, "restart-app", 2)); // no rebalance either
            }
        } finally {
            instances.forEach(KafkaStreams::close);
            broker.close();
        }
    }
}
