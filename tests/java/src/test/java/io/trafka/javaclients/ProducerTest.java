package io.trafka.javaclients;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Future;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.junit.jupiter.api.Test;

class ProducerTest {
    @Test
    void idempotentProducerAssignsContiguousOffsets() throws Exception {
        String topic = Brokers.unique("idempotent");
        Brokers.createTopic(topic, 2);
        Map<String, Object> config = Brokers.producerConfig();
        config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(config)) {
            for (int i = 0; i < 200; i++) {
                sent.add(producer.send(new ProducerRecord<>(topic, i % 2, "k" + i, "v" + i)));
            }
            producer.flush();
        }
        long[] next = new long[2];
        for (int i = 0; i < sent.size(); i++) {
            RecordMetadata metadata = sent.get(i).get();
            assertEquals(i % 2, metadata.partition());
            assertEquals(next[i % 2]++, metadata.offset());
        }
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Brokers.consumerConfig(null))) {
            consumer.assign(List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1)));
            consumer.seekToBeginning(consumer.assignment());
            assertEquals(200, Poll.records(consumer, 200).size());
        }
    }

    @Test
    void readCommittedSeesCommittedTransactionsOnly() throws Exception {
        String topic = Brokers.unique("txn");
        Brokers.createTopic(topic, 1);
        try (KafkaProducer<String, String> producer = transactional(Brokers.unique("txn-id"))) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, "a", "committed-1"));
            producer.send(new ProducerRecord<>(topic, "b", "committed-2"));
            producer.commitTransaction();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, "c", "aborted"));
            producer.flush();
            producer.abortTransaction();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, "d", "committed-3"));
            producer.commitTransaction();
        }
        TopicPartition partition = new TopicPartition(topic, 0);
        Map<String, Object> config = Brokers.consumerConfig(null);
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config)) {
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            List<String> values = Poll.records(consumer, 3).stream().map(ConsumerRecord::value).toList();
            assertEquals(List.of("committed-1", "committed-2", "committed-3"), values);
            // Three commit or abort markers take an offset each: 4 records + 3 markers.
            assertEquals(7L, consumer.endOffsets(List.of(partition)).get(partition));
        }
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config)) {
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            List<Long> offsets = Poll.records(consumer, 4).stream().map(ConsumerRecord::offset).toList();
            assertEquals(List.of(0L, 1L, 3L, 5L), offsets);
        }
    }

    @Test
    void offsetsCommittedInATransactionAreTheGroupsOnCommit() throws Exception {
        String topic = Brokers.unique("txn-offsets");
        String group = Brokers.unique("txn-group");
        Brokers.createTopic(topic, 1);
        Brokers.produce(topic, 1, 5);
        TopicPartition partition = new TopicPartition(topic, 0);
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Brokers.consumerConfig(group));
                KafkaProducer<String, String> producer = transactional(Brokers.unique("ctp"))) {
            consumer.subscribe(List.of(topic));
            Poll.records(consumer, 5);
            producer.initTransactions();
            producer.beginTransaction();
            producer.sendOffsetsToTransaction(Map.of(partition, new OffsetAndMetadata(5)), consumer.groupMetadata());
            producer.abortTransaction();
            assertEquals(Map.of(), withoutNulls(consumer.committed(Set.of(partition))));
            producer.beginTransaction();
            producer.sendOffsetsToTransaction(Map.of(partition, new OffsetAndMetadata(3)), consumer.groupMetadata());
            producer.commitTransaction();
            Poll.until("the transactional commit", () -> consumer.poll(Duration.ofMillis(50)),
                    () -> Map.of(partition, 3L).equals(offsets(consumer.committed(Set.of(partition)))));
        }
    }

    @Test
    void aNewInstanceFencesTheOldOne() throws Exception {
        String topic = Brokers.unique("fence");
        String transactionalId = Brokers.unique("fenced-id");
        Brokers.createTopic(topic, 1);
        try (KafkaProducer<String, String> old = transactional(transactionalId)) {
            old.initTransactions();
            old.beginTransaction();
            old.send(new ProducerRecord<>(topic, "k", "from-old")).get();
            try (KafkaProducer<String, String> successor = transactional(transactionalId)) {
                successor.initTransactions();
                Exception fenced = assertThrows(Exception.class, () -> {
                    old.send(new ProducerRecord<>(topic, "k", "again")).get();
                    old.commitTransaction();
                });
                assertTrue(causes(fenced).anyMatch(cause -> cause instanceof ProducerFencedException
                        || cause instanceof InvalidProducerEpochException), fenced.toString());
                successor.beginTransaction();
                successor.send(new ProducerRecord<>(topic, "k", "from-successor"));
                successor.commitTransaction();
            }
        }
        Map<String, Object> config = Brokers.consumerConfig(null);
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config)) {
            TopicPartition partition = new TopicPartition(topic, 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            assertEquals(List.of("from-successor"), Poll.records(consumer, 1).stream().map(ConsumerRecord::value).toList());
        }
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

    static Map<TopicPartition, OffsetAndMetadata> withoutNulls(Map<TopicPartition, OffsetAndMetadata> committed) {
        Map<TopicPartition, OffsetAndMetadata> present = new java.util.HashMap<>();
        committed.forEach((partition, offset) -> {
            if (offset != null) {
                present.put(partition, offset);
            }
        });
        return present;
    }

    static Map<TopicPartition, Long> offsets(Map<TopicPartition, OffsetAndMetadata> committed) {
        Map<TopicPartition, Long> offsets = new java.util.HashMap<>();
        withoutNulls(committed).forEach((partition, offset) -> offsets.put(partition, offset.offset()));
        return offsets;
    }
}
