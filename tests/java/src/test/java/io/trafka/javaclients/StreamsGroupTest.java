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
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.GroupProtocol;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.junit.jupiter.api.Test;

/**
 * A Kafka Streams 4.2 word count with `group.protocol=streams` (KIP-1071): the broker creates the
 * repartition topic (groupBy) and the state store's changelog (count), assigns the tasks, and the
 * counts on the output topic are exact.
 */
class StreamsGroupTest {
    private static final int PARTITIONS = 3;

    private static KafkaStreams wordCount(String appId, String input, String output, Path stateDir) {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
                .flatMapValues(line -> Arrays.asList(line.toLowerCase().split("\\s+")))
                .groupBy((key, word) -> word)
                .count(Materialized.as("counts"))
                .toStream()
                .to(output, Produced.with(Serdes.String(), Serdes.Long()));
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, Brokers.bootstrap());
        props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, GroupProtocol.STREAMS.name().toLowerCase());
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        props.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        return new KafkaStreams(builder.build(), props);
    }

    /** The latest count of each word on the output topic, read until it equals `expected`. */
    private static Map<String, Long> readCounts(String output, Map<String, Long> expected) {
        Map<String, Object> config = Brokers.consumerConfig(null);
        config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, LongDeserializer.class);
        Map<String, Long> latest = new TreeMap<>();
        try (KafkaConsumer<String, Long> consumer = new KafkaConsumer<>(config)) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++) {
                partitions.add(new TopicPartition(output, p));
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Poll.until("the word counts " + expected + " (latest: " + latest + ")",
                    () -> consumer.poll(Duration.ofMillis(100)).forEach(r -> latest.put(r.key(), r.value())),
                    () -> latest.equals(expected));
        }
        return latest;
    }

    private static void produceLines(String input, List<String> lines, Map<String, Long> expected) {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Brokers.producerConfig())) {
            for (int i = 0; i < lines.size(); i++) {
                producer.send(new ProducerRecord<>(input, "line" + i, lines.get(i)));
                for (String word : lines.get(i).toLowerCase().split("\\s+")) {
                    expected.merge(word, 1L, Long::sum);
                }
            }
            producer.flush();
        }
    }

    /** Waits until the group has `members` members, Stable, every one running `tasksEach` active tasks. */
    private static StreamsGroupDescription awaitBalanced(Admin admin, String appId, int members, int tasksEach)
            throws Exception {
        long deadline = System.nanoTime() + Poll.DEADLINE.toNanos();
        StreamsGroupDescription group = null;
        while (System.nanoTime() < deadline) {
            group = admin.describeStreamsGroups(List.of(appId)).all().get().get(appId);
            boolean balanced = group.groupState() == GroupState.STABLE && group.members().size() == members
                    && group.members().stream().allMatch(m -> m.assignment().activeTasks().stream()
                            .mapToInt(t -> t.partitions().size()).sum() == tasksEach);
            if (balanced) {
                return group;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("the group never had " + members + " members of " + tasksEach + " tasks: " + group);
    }

    @Test
    void threeInstancesShareTheTasksAndOneTakesThemAllBack() throws Exception {
        String appId = Brokers.unique("wordcount-scale");
        String input = Brokers.unique("lines");
        String output = Brokers.unique("counts");
        Brokers.createTopic(input, PARTITIONS);
        Brokers.createTopic(output, PARTITIONS);
        Map<String, Long> expected = new TreeMap<>();
        produceLines(input, List.of("one two three", "two three", "three"), expected);
        List<KafkaStreams> instances = new ArrayList<>();
        try (Admin admin = Brokers.admin()) {
            for (int i = 0; i < 3; i++) {
                KafkaStreams instance = wordCount(appId, input, output, Files.createTempDirectory("trafka-streams-"));
                instances.add(instance);
                instance.start();
                if (i == 0) {
                    readCounts(output, expected);
                }
            }
            StreamsGroupDescription three = awaitBalanced(admin, appId, 3, 2);
            assertEquals(3, three.members().stream().map(m -> m.processId()).distinct().count());
            produceLines(input, List.of("four four four four", "one"), expected);
            readCounts(output, expected);

            instances.remove(2).close();
            instances.remove(1).close();
            awaitBalanced(admin, appId, 1, 2 * PARTITIONS);
            produceLines(input, List.of("five five five five five", "one two"), expected);
            assertEquals(expected, readCounts(output, expected));
        } finally {
            instances.forEach(KafkaStreams::close);
        }
    }

    @Test
    void aWordCountCountsExactlyWithTheBrokerAssigningItsTasks() throws Exception {
        String appId = Brokers.unique("wordcount");
        String input = Brokers.unique("lines");
        String output = Brokers.unique("counts");
        Brokers.createTopic(input, PARTITIONS);
        Brokers.createTopic(output, PARTITIONS);
        List<String> lines = List.of("the quick brown fox", "jumps over the lazy dog", "the dog barks",
                "a fox and a dog", "The END");
        Map<String, Long> expected = new TreeMap<>();
        for (String line : lines) {
            for (String word : line.toLowerCase().split("\\s+")) {
                expected.merge(word, 1L, Long::sum);
            }
        }
        Map<String, Object> producerConfig = Brokers.producerConfig();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerConfig)) {
            for (int i = 0; i < lines.size(); i++) {
                producer.send(new ProducerRecord<>(input, "line" + i, lines.get(i)));
            }
            producer.flush();
        }
        Path stateDir = Files.createTempDirectory("trafka-streams-");
        try (KafkaStreams streams = wordCount(appId, input, output, stateDir)) {
            streams.start();
            assertEquals(expected, readCounts(output, expected));

            try (Admin admin = Brokers.admin()) {
                Set<String> internal = admin.listTopics().names().get().stream()
                        .filter(name -> name.startsWith(appId + "-")).collect(Collectors.toSet());
                String repartition = appId + "-counts-repartition";
                String changelog = appId + "-counts-changelog";
                assertEquals(Set.of(repartition, changelog), internal);
                Map<String, TopicDescription> described = admin.describeTopics(internal).allTopicNames().get();
                assertEquals(PARTITIONS, described.get(repartition).partitions().size());
                assertEquals(PARTITIONS, described.get(changelog).partitions().size());
                ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, changelog);
                Config config = admin.describeConfigs(List.of(resource)).all().get().get(resource);
                assertEquals("compact", config.get("cleanup.policy").value());

                StreamsGroupDescription group = admin.describeStreamsGroups(List.of(appId)).all().get().get(appId);
                assertEquals(GroupState.STABLE, group.groupState());
                assertEquals(1, group.members().size());
                assertEquals(2, group.subtopologies().size());
                int activeTasks = group.members().iterator().next().assignment().activeTasks().stream()
                        .mapToInt(t -> t.partitions().size()).sum();
                assertEquals(2 * PARTITIONS, activeTasks);
            }
        }
    }
}
