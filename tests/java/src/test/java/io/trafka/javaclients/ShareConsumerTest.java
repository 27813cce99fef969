package io.trafka.javaclients;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;

/** KIP-932 share groups through KafkaShareConsumer. */
class ShareConsumerTest {
    /** A share group that starts at the topic's beginning (share.auto.offset.reset=earliest). */
    private static String shareGroup() throws Exception {
        String group = Brokers.unique("share");
        try (Admin admin = Brokers.admin()) {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
            AlterConfigOp earliest = new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"),
                    AlterConfigOp.OpType.SET);
            admin.incrementalAlterConfigs(Map.of(resource, List.of(earliest))).all().get();
        }
        return group;
    }

    private static KafkaShareConsumer<String, String> consumer(String group, String mode) {
        Map<String, Object> config = Brokers.consumerConfig(group);
        config.remove(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG);
        config.remove(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG);
        config.put("share.acknowledgement.mode", mode);
        return new KafkaShareConsumer<>(config);
    }

    /** Polls until `count` records came, acknowledging each (explicit mode) as `decide` says. */
    private static List<ConsumerRecord<String, String>> poll(KafkaShareConsumer<String, String> consumer, int count,
            Function<ConsumerRecord<String, String>, AcknowledgeType> decide) {
        List<ConsumerRecord<String, String>> seen = new ArrayList<>();
        long deadline = System.nanoTime() + Poll.DEADLINE.toNanos();
        while (seen.size() < count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("got " + seen.size() + " of " + count + " records: " + seen);
            }
            for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(100))) {
                seen.add(record);
                if (decide != null) {
                    consumer.acknowledge(record, decide.apply(record));
                }
            }
        }
        return seen;
    }

    private static SharePartitionOffsetInfo progress(String group, TopicPartition partition) throws Exception {
        try (Admin admin = Brokers.admin()) {
            ListShareGroupOffsetsSpec spec = new ListShareGroupOffsetsSpec().topicPartitions(List.of(partition));
            return admin.listShareGroupOffsets(Map.of(group, spec)).partitionsToOffsetInfo(group).get().get(partition);
        }
    }

    /**
     * Until the share-partition has nothing left to deliver (lag 0, KIP-1226). Kafka writes the start
     * offset to its share coordinator lazily (it may still name an offset whose records are all
     * acknowledged), so the lag is what both brokers agree on.
     */
    private static void awaitNoLag(String group, TopicPartition partition) throws Exception {
        long deadline = System.nanoTime() + Poll.DEADLINE.toNanos();
        for (SharePartitionOffsetInfo info = progress(group, partition);
                info == null || !info.lag().equals(Optional.of(0L)); info = progress(group, partition)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("share-partition progress " + info + ", not lag 0");
            }
            Thread.sleep(50);
        }
    }

    @Test
    void implicitAcknowledgementAcceptsWhatWasPolled() throws Exception {
        String topic = Brokers.unique("share-implicit");
        Brokers.createTopic(topic, 1);
        Brokers.produce(topic, 1, 5);
        String group = shareGroup();
        try (KafkaShareConsumer<String, String> consumer = consumer(group, "implicit")) {
            consumer.subscribe(List.of(topic));
            List<ConsumerRecord<String, String>> records = poll(consumer, 5, null);
            assertEquals(List.of("v0", "v1", "v2", "v3", "v4"), records.stream().map(ConsumerRecord::value).toList());
            records.forEach(record -> assertEquals(Optional.of((short) 1), record.deliveryCount()));
            consumer.commitSync().values().forEach(error -> assertEquals(Optional.empty(), error));
        }
        awaitNoLag(group, new TopicPartition(topic, 0));
    }

    @Test
    void releasedRecordsComeBackAndRejectedOnesDoNot() throws Exception {
        String topic = Brokers.unique("share-explicit");
        Brokers.createTopic(topic, 1);
        Brokers.produce(topic, 1, 5);
        String group = shareGroup();
        try (KafkaShareConsumer<String, String> consumer = consumer(group, "explicit")) {
            consumer.subscribe(List.of(topic));
            poll(consumer, 5, record -> switch ((int) record.offset()) {
                case 2 -> AcknowledgeType.RELEASE;
                case 3 -> AcknowledgeType.REJECT;
                default -> AcknowledgeType.ACCEPT;
            });
            consumer.commitSync();
            List<ConsumerRecord<String, String>> again = poll(consumer, 1, record -> AcknowledgeType.ACCEPT);
            assertEquals(2L, again.get(0).offset());
            assertEquals(Optional.of((short) 2), again.get(0).deliveryCount());
            consumer.commitSync();
        }
        awaitNoLag(group, new TopicPartition(topic, 0));
    }

    @Test
    void aRenewedRecordStaysWithItsConsumer() throws Exception {
        String topic = Brokers.unique("share-renew");
        Brokers.createTopic(topic, 1);
        Brokers.produce(topic, 1, 1);
        String group = shareGroup();
        try (KafkaShareConsumer<String, String> consumer = consumer(group, "explicit")) {
            consumer.subscribe(List.of(topic));
            poll(consumer, 1, record -> AcknowledgeType.RENEW);
            List<ConsumerRecord<String, String>> renewed = poll(consumer, 1, record -> AcknowledgeType.ACCEPT);
            assertEquals(0L, renewed.get(0).offset());
            assertEquals(Optional.of((short) 1), renewed.get(0).deliveryCount());
            consumer.commitSync();
        }
        awaitNoLag(group, new TopicPartition(topic, 0));
    }

    @Test
    void theDeliveryLimitArchivesARecordReleasedTooOften() throws Exception {
        String topic = Brokers.unique("share-limit");
        Brokers.createTopic(topic, 1);
        Brokers.produce(topic, 1, 1);
        String group = shareGroup();
        try (KafkaShareConsumer<String, String> consumer = consumer(group, "explicit")) {
            consumer.subscribe(List.of(topic));
            // group.share.delivery.count.limit is 5 (Kafka's default) on both brokers.
            for (short delivery = 1; delivery <= 5; delivery++) {
                ConsumerRecord<String, String> record = poll(consumer, 1, r -> AcknowledgeType.RELEASE).get(0);
                assertEquals(0L, record.offset());
                assertEquals(Optional.of(delivery), record.deliveryCount());
                consumer.commitSync();
            }
            Brokers.produce(topic, 1, 1); // a sentinel at offset 1: what comes next
            List<ConsumerRecord<String, String>> next = poll(consumer, 1, record -> AcknowledgeType.ACCEPT);
            assertFalse(next.stream().anyMatch(record -> record.offset() == 0L), next.toString());
            consumer.commitSync();
        }
        awaitNoLag(group, new TopicPartition(topic, 0));
    }
}
