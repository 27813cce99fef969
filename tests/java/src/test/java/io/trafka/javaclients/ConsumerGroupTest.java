package io.trafka.javaclients;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Every case under both group protocols: classic (JoinGroup/SyncGroup) and consumer (KIP-848). */
class ConsumerGroupTest {
    private static KafkaConsumer<String, String> consumer(String protocol, String group, String instanceId) {
        Map<String, Object> config = Brokers.consumerConfig(group);
        config.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        config.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, 500);
        if (instanceId != null) {
            config.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, instanceId);
        }
        return new KafkaConsumer<>(config);
    }

    private static Set<TopicPartition> partitions(String topic, int... numbers) {
        Set<TopicPartition> partitions = new HashSet<>();
        for (int number : numbers) {
            partitions.add(new TopicPartition(topic, number));
        }
        return partitions;
    }

    private static void pollAll(List<KafkaConsumer<String, String>> consumers) {
        consumers.forEach(consumer -> consumer.poll(Duration.ofMillis(50)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"classic", "consumer"})
    void committedOffsetsAreWhereTheGroupResumes(String protocol) throws Exception {
        String topic = Brokers.unique("commits-" + protocol);
        String group = Brokers.unique("g");
        Brokers.createTopic(topic, 2);
        Brokers.produce(topic, 2, 10);
        try (KafkaConsumer<String, String> first = consumer(protocol, group, null)) {
            first.subscribe(List.of(topic));
            Poll.records(first, 10);
            first.commitSync(Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(2, "two"),
                    new TopicPartition(topic, 1), new OffsetAndMetadata(4)));
            Map<TopicPartition, OffsetAndMetadata> committed = first.committed(partitions(topic, 0, 1));
            assertEquals(2L, committed.get(new TopicPartition(topic, 0)).offset());
            assertEquals("two", committed.get(new TopicPartition(topic, 0)).metadata());
            assertEquals(4L, committed.get(new TopicPartition(topic, 1)).offset());
        }
        try (KafkaConsumer<String, String> second = consumer(protocol, group, null)) {
            second.subscribe(List.of(topic));
            List<ConsumerRecord<String, String>> resumed = Poll.records(second, 4);
            Set<String> values = new HashSet<>();
            resumed.forEach(record -> values.add(record.partition() + "@" + record.offset()));
            assertEquals(Set.of("0@2", "0@3", "0@4", "1@4"), values);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"classic", "consumer"})
    void aJoinSplitsThePartitionsAndALeaveGivesThemBack(String protocol) throws Exception {
        String topic = Brokers.unique("joins-" + protocol);
        String group = Brokers.unique("g");
        Brokers.createTopic(topic, 4);
        try (KafkaConsumer<String, String> first = consumer(protocol, group, null)) {
            first.subscribe(List.of(topic));
            Poll.until("the first member to own every partition", () -> first.poll(Duration.ofMillis(50)),
                    () -> first.assignment().size() == 4);
            try (KafkaConsumer<String, String> second = consumer(protocol, group, null)) {
                second.subscribe(List.of(topic));
                List<KafkaConsumer<String, String>> both = List.of(first, second);
                Poll.until("two partitions each", () -> pollAll(both),
                        () -> first.assignment().size() == 2 && second.assignment().size() == 2);
                Set<TopicPartition> union = new HashSet<>(first.assignment());
                union.addAll(second.assignment());
                assertEquals(partitions(topic, 0, 1, 2, 3), union);
            }
            Poll.until("the remaining member to own every partition again", () -> first.poll(Duration.ofMillis(50)),
                    () -> first.assignment().size() == 4);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"classic", "consumer"})
    void aStaticMemberComesBackToItsPartitions(String protocol) throws Exception {
        String topic = Brokers.unique("static-" + protocol);
        String group = Brokers.unique("g");
        Brokers.createTopic(topic, 4);
        KafkaConsumer<String, String> stays = consumer(protocol, group, "stays");
        KafkaConsumer<String, String> bounces = consumer(protocol, group, "bounces");
        try {
            stays.subscribe(List.of(topic));
            bounces.subscribe(List.of(topic));
            List<KafkaConsumer<String, String>> both = List.of(stays, bounces);
            Poll.until("two partitions each", () -> pollAll(both),
                    () -> stays.assignment().size() == 2 && bounces.assignment().size() == 2);
            Set<TopicPartition> kept = Set.copyOf(stays.assignment());
            Set<TopicPartition> owned = Set.copyOf(bounces.assignment());
            bounces.close();
            try (KafkaConsumer<String, String> back = consumer(protocol, group, "bounces")) {
                back.subscribe(List.of(topic));
                Poll.until("the static member's partitions to come back", () -> pollAll(List.of(stays, back)),
                        () -> back.assignment().equals(owned));
                assertEquals(kept, stays.assignment());
            }
        } finally {
            stays.close();
            bounces.close();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"classic", "consumer"})
    void aRegexSubscriptionFollowsNewTopics(String protocol) throws Exception {
        String prefix = Brokers.unique("regex-" + protocol);
        Brokers.createTopic(prefix + "-a", 1);
        Brokers.createTopic(prefix + "-b", 1);
        Brokers.createTopic(Brokers.unique("other"), 1);
        try (KafkaConsumer<String, String> member = consumer(protocol, Brokers.unique("g"), null)) {
            if (protocol.equals("consumer")) {
                member.subscribe(new SubscriptionPattern(prefix + "-.*")); // resolved by the broker (RE2J)
            } else {
                member.subscribe(Pattern.compile(Pattern.quote(prefix) + "-.*")); // resolved by the client
            }
            Set<TopicPartition> ab = Set.of(new TopicPartition(prefix + "-a", 0), new TopicPartition(prefix + "-b", 0));
            Poll.until("both matching topics", () -> member.poll(Duration.ofMillis(50)),
                    () -> member.assignment().equals(ab));
            Brokers.createTopic(prefix + "-c", 1);
            Poll.until("the new matching topic", () -> member.poll(Duration.ofMillis(50)),
                    () -> member.assignment().contains(new TopicPartition(prefix + "-c", 0)));
            assertTrue(member.assignment().containsAll(ab));
        }
    }
}
