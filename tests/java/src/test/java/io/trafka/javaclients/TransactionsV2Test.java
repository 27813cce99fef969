package io.trafka.javaclients;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.junit.jupiter.api.Test;

/**
 * Kafka 4.2's producer running transactions V2 (KIP-890 part 2), as it does against any cluster that
 * finalizes transaction.version 2 (every new Kafka 4 cluster, and trafka's new log dirs): every commit
 * and abort bumps the producer epoch, seen in DescribeTransactions and DescribeProducers. The same
 * scenario with transaction.version 1 finalized runs the old protocol: the epoch stays.
 */
class TransactionsV2Test {
    private static final String TRANSACTION_VERSION = "transaction.version";

    @Test
    void everyCommitAndAbortBumpsTheEpochWithTransactionVersion2() throws Exception {
        assertEquals(2, finalizedTransactionVersion());
        runTransactions(true);
    }

    @Test
    void transactionVersion1KeepsTheEpochAcrossTransactions() throws Exception {
        setTransactionVersion(1, FeatureUpdate.UpgradeType.SAFE_DOWNGRADE);
        try {
            runTransactions(false);
        } finally {
            setTransactionVersion(2, FeatureUpdate.UpgradeType.UPGRADE);
        }
    }

    @Test
    void aZombieIsFencedAndSendOffsetsToTransactionCommitsWithV2() throws Exception {
        String input = Brokers.unique("tv2-in");
        String output = Brokers.unique("tv2-out");
        String group = Brokers.unique("tv2-group");
        String transactionalId = Brokers.unique("tv2-ctp");
        Brokers.createTopic(input, 1);
        Brokers.createTopic(output, 1);
        Brokers.produce(input, 1, 4);
        TopicPartition in = new TopicPartition(input, 0);
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Brokers.consumerConfig(group));
                KafkaProducer<String, String> producer = transactional(transactionalId)) {
            consumer.subscribe(List.of(input));
            List<ConsumerRecord<String, String>> read = Poll.records(consumer, 4);
            producer.initTransactions();
            producer.beginTransaction();
            for (ConsumerRecord<String, String> record : read) {
                producer.send(new ProducerRecord<>(output, record.key(), record.value() + "!"));
            }
            producer.sendOffsetsToTransaction(Map.of(in, new OffsetAndMetadata(4)), consumer.groupMetadata());
            producer.commitTransaction();
            Poll.until("the transactional offsets", () -> consumer.poll(Duration.ofMillis(50)),
                    () -> Map.of(in, 4L).equals(ProducerTest.offsets(consumer.committed(Set.of(in)))));

            producer.beginTransaction();
            producer.send(new ProducerRecord<>(output, "zombie", "from-old")).get();
            try (KafkaProducer<String, String> successor = transactional(transactionalId)) {
                successor.initTransactions(); // aborts the old instance's transaction and fences it
                Exception fenced = assertThrows(Exception.class, () -> {
                    producer.send(new ProducerRecord<>(output, "zombie", "again")).get();
                    producer.commitTransaction();
                });
                assertTrue(causes(fenced).anyMatch(cause -> cause instanceof ProducerFencedException
                        || cause instanceof InvalidProducerEpochException), fenced.toString());
                successor.beginTransaction();
                successor.send(new ProducerRecord<>(output, "k", "from-successor"));
                successor.commitTransaction();
            }
        }
        Map<String, Object> config = Brokers.consumerConfig(null);
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config)) {
            TopicPartition out = new TopicPartition(output, 0);
            consumer.assign(List.of(out));
            consumer.seekToBeginning(List.of(out));
            List<String> values = Poll.records(consumer, 5).stream().map(ConsumerRecord::value).toList();
            assertEquals(List.of("v0!", "v1!", "v2!", "v3!", "from-successor"), values);
        }
    }

    /** Commit, abort, commit; the epoch after each as DescribeTransactions and DescribeProducers see it. */
    private static void runTransactions(boolean bumps) throws Exception {
        String topic = Brokers.unique(bumps ? "tv2" : "tv1");
        String transactionalId = Brokers.unique(bumps ? "tv2-id" : "tv1-id");
        Brokers.createTopic(topic, 1);
        TopicPartition partition = new TopicPartition(topic, 0);
        try (KafkaProducer<String, String> producer = transactional(transactionalId); Admin admin = Brokers.admin()) {
            producer.initTransactions();
            TransactionDescription initial = describe(admin, transactionalId);
            int epoch = initial.producerEpoch();
            long producerId = initial.producerId();
            String[] outcomes = {"commit", "abort", "commit"};
            for (int i = 0; i < outcomes.length; i++) {
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(topic, "k", outcomes[i] + i)).get();
                if (outcomes[i].equals("commit")) {
                    producer.commitTransaction();
                } else {
                    producer.abortTransaction();
                }
                TransactionState done = outcomes[i].equals("commit") ? TransactionState.COMPLETE_COMMIT
                        : TransactionState.COMPLETE_ABORT;
                // Kafka writes the markers after answering EndTxn: Prepare* until they are all written.
                Poll.until(outcomes[i] + " completed", () -> { }, () -> done == quietly(() -> describe(admin,
                        transactionalId).state()));
                Poll.until("the marker on " + partition, () -> { }, () -> Boolean.TRUE.equals(quietly(
                        () -> admin.describeProducers(List.of(partition)).partitionResult(partition).get()
                                .activeProducers().get(0).currentTransactionStartOffset().isEmpty())));
                TransactionDescription after = describe(admin, transactionalId);
                assertEquals(producerId, after.producerId());
                assertEquals(bumps ? epoch + i + 1 : epoch, (int) after.producerEpoch(), outcomes[i] + " " + i);
                ProducerState state = admin.describeProducers(List.of(partition)).partitionResult(partition).get()
                        .activeProducers().get(0);
                // The marker carries the bumped epoch with V2; the old protocol writes it at the same epoch.
                assertEquals(bumps ? epoch + i + 1 : epoch, state.producerEpoch());
            }
        }
        Map<String, Object> config = Brokers.consumerConfig(null);
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config)) {
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            List<String> values = Poll.records(consumer, 2).stream().map(ConsumerRecord::value).toList();
            assertEquals(List.of("commit0", "commit2"), values);
        }
    }

    interface Call<T> {
        T call() throws Exception;
    }

    private static <T> T quietly(Call<T> call) {
        try {
            return call.call();
        } catch (Exception e) {
            return null;
        }
    }

    private static TransactionDescription describe(Admin admin, String transactionalId) throws Exception {
        return admin.describeTransactions(List.of(transactionalId)).description(transactionalId).get();
    }

    private static int finalizedTransactionVersion() throws Exception {
        try (Admin admin = Brokers.admin()) {
            var level = admin.describeFeatures().featureMetadata().get().finalizedFeatures().get(TRANSACTION_VERSION);
            return level == null ? 0 : level.maxVersionLevel();
        }
    }

    private static void setTransactionVersion(int level, FeatureUpdate.UpgradeType type) throws Exception {
        try (Admin admin = Brokers.admin()) {
            admin.updateFeatures(Map.of(TRANSACTION_VERSION, new FeatureUpdate((short) level, type)),
                    new UpdateFeaturesOptions()).all().get();
        }
        Poll.until("transaction.version " + level, () -> { },
                () -> Integer.valueOf(level).equals(quietly(TransactionsV2Test::finalizedTransactionVersion)));
    }

    private static KafkaProducer<String, String> transactional(String transactionalId) {
        Map<String, Object> config = Brokers.producerConfig();
        config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        config.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 20000);
        return new KafkaProducer<>(config);
    }

    private static java.util.stream.Stream<Throwable> causes(Throwable error) {
        return java.util.stream.Stream.iterate(error, cause -> cause != null, Throwable::getCause);
    }
}
