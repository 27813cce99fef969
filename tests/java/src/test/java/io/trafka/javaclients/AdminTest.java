package io.trafka.javaclients;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;
import org.apache.kafka.clients.admin.UserScramCredentialAlteration;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.admin.UserScramCredentialsDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.UnsupportedByAuthenticationException;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.ResourceNotFoundException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.junit.jupiter.api.Test;

/** The Admin client's calls, each checked for what Kafka answers. */
class AdminTest {
    private static Throwable failure(Future<?> future) {
        ExecutionException error = assertThrows(ExecutionException.class, future::get);
        return error.getCause();
    }

    private static void eventually(String what, ThrowingCheck check) throws Exception {
        long deadline = System.nanoTime() + Poll.DEADLINE.toNanos();
        while (!check.holds()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(50);
        }
    }

    interface ThrowingCheck {
        boolean holds() throws Exception;
    }

    private static int nodeId(Admin admin) throws Exception {
        return admin.describeCluster().nodes().get().iterator().next().id();
    }

    @Test
    void topicsAreCreatedDescribedGrownAndDeleted() throws Exception {
        String topic = Brokers.unique("admin-topic");
        try (Admin admin = Brokers.admin()) {
            NewTopic spec = new NewTopic(topic, 2, (short) 1).configs(Map.of("retention.ms", "123456"));
            Uuid id = admin.createTopics(List.of(spec)).topicId(topic).get();
            assertFalse(id.equals(Uuid.ZERO_UUID));
            assertTrue(admin.listTopics().names().get().contains(topic));
            TopicDescription description = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            assertEquals(id, description.topicId());
            assertEquals(2, description.partitions().size());
            assertEquals(1, description.partitions().get(0).replicas().size());
            assertInstanceOf(TopicExistsException.class, failure(admin.createTopics(List.of(spec)).all()));
            admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(3))).all().get();
            eventually("three partitions", () ->
                    admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().size() == 3);
            admin.deleteTopics(List.of(topic)).all().get();
            eventually("the topic gone", () -> !admin.listTopics().names().get().contains(topic));
        }
    }

    @Test
    void topicAndBrokerConfigsAreDescribedAndAltered() throws Exception {
        String topic = Brokers.unique("admin-configs");
        Brokers.createTopic(topic, 1, Map.of("retention.ms", "123456"));
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        try (Admin admin = Brokers.admin()) {
            Config config = admin.describeConfigs(List.of(resource)).all().get().get(resource);
            assertEquals("123456", config.get("retention.ms").value());
            assertEquals(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, config.get("retention.ms").source());
            assertEquals("delete", config.get("cleanup.policy").value());
            admin.incrementalAlterConfigs(Map.of(resource, List.of(
                    new AlterConfigOp(new ConfigEntry("max.message.bytes", "65536"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("retention.ms", ""), AlterConfigOp.OpType.DELETE)))).all().get();
            config = admin.describeConfigs(List.of(resource)).all().get().get(resource);
            assertEquals("65536", config.get("max.message.bytes").value());
            assertEquals("604800000", config.get("retention.ms").value());
            Throwable refused = failure(admin.incrementalAlterConfigs(Map.of(resource, List.of(
                    new AlterConfigOp(new ConfigEntry("retention.ms", "soon"), AlterConfigOp.OpType.SET)))).all());
            assertInstanceOf(InvalidConfigurationException.class, refused);
            assertEquals("Invalid value soon for configuration retention.ms: Not a number of type LONG",
                    refused.getMessage());

            ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, String.valueOf(nodeId(admin)));
            Config brokerConfig = admin.describeConfigs(List.of(broker)).all().get().get(broker);
            assertEquals("1048588", brokerConfig.get("message.max.bytes").value());
        }
    }

    @Test
    void consumerGroupsAreListedDescribedRewoundAndDeleted() throws Exception {
        String topic = Brokers.unique("admin-groups");
        String classic = Brokers.unique("classic");
        String modern = Brokers.unique("modern");
        Brokers.createTopic(topic, 1);
        Brokers.produce(topic, 1, 4);
        TopicPartition partition = new TopicPartition(topic, 0);
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Brokers.consumerConfig(classic))) {
            consumer.subscribe(List.of(topic));
            Poll.records(consumer, 4);
            consumer.commitSync();
        }
        Map<String, Object> config = Brokers.consumerConfig(modern);
        config.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
        try (Admin admin = Brokers.admin();
                KafkaConsumer<String, String> member = new KafkaConsumer<>(config)) {
            member.subscribe(List.of(topic));
            Poll.until("an assignment", () -> member.poll(Duration.ofMillis(50)), () -> !member.assignment().isEmpty());
            Map<String, ConsumerGroupDescription> described =
                    admin.describeConsumerGroups(List.of(classic, modern)).all().get();
            assertEquals(GroupState.EMPTY, described.get(classic).groupState());
            assertEquals(GroupType.CLASSIC, described.get(classic).type());
            assertEquals(GroupState.STABLE, described.get(modern).groupState());
            assertEquals(GroupType.CONSUMER, described.get(modern).type());
            assertEquals(Set.of(partition),
                    described.get(modern).members().iterator().next().assignment().topicPartitions());

            Collection<GroupListing> listed = admin.listGroups(ListGroupsOptions.forConsumerGroups()).all().get();
            assertTrue(listed.stream().anyMatch(g -> g.groupId().equals(classic)
                    && g.type().equals(java.util.Optional.of(GroupType.CLASSIC))), listed.toString());
            assertTrue(listed.stream().anyMatch(g -> g.groupId().equals(modern)
                    && g.type().equals(java.util.Optional.of(GroupType.CONSUMER))), listed.toString());

            assertEquals(4L, admin.listConsumerGroupOffsets(classic).partitionsToOffsetAndMetadata().get()
                    .get(partition).offset());
            admin.alterConsumerGroupOffsets(classic, Map.of(partition, new OffsetAndMetadata(1))).all().get();
            assertEquals(1L, admin.listConsumerGroupOffsets(classic).partitionsToOffsetAndMetadata().get()
                    .get(partition).offset());
            admin.deleteConsumerGroupOffsets(classic, Set.of(partition)).all().get();
            assertEquals(null, admin.listConsumerGroupOffsets(classic).partitionsToOffsetAndMetadata().get()
                    .get(partition));
            admin.deleteConsumerGroups(List.of(classic)).all().get();
            assertInstanceOf(GroupIdNotFoundException.class,
                    failure(admin.describeConsumerGroups(List.of(classic)).all()));
        }
    }

    @Test
    void shareGroupsAreDescribedRewoundAndDeleted() throws Exception {
        String topic = Brokers.unique("admin-share");
        String group = Brokers.unique("share");
        Brokers.createTopic(topic, 1);
        Brokers.produce(topic, 1, 3);
        TopicPartition partition = new TopicPartition(topic, 0);
        try (Admin admin = Brokers.admin()) {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
            admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(
                    new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET)))).all().get();
            Map<String, Object> config = Brokers.consumerConfig(group);
            config.remove(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG);
            config.remove(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG);
            try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(config)) {
                consumer.subscribe(List.of(topic));
                int[] seen = {0};
                Poll.until("three records", () -> seen[0] += consumer.poll(Duration.ofMillis(100)).count(),
                        () -> seen[0] >= 3);
                consumer.commitSync();
                ShareGroupDescription live = admin.describeShareGroups(List.of(group)).all().get().get(group);
                assertEquals(GroupState.STABLE, live.groupState());
                assertEquals(1, live.members().size());
            }
            Collection<GroupListing> listed = admin.listGroups(ListGroupsOptions.forShareGroups()).all().get();
            assertTrue(listed.stream().anyMatch(g -> g.groupId().equals(group)), listed.toString());
            eventually("an empty share group", () ->
                    admin.describeShareGroups(List.of(group)).all().get().get(group).groupState() == GroupState.EMPTY);
            ListShareGroupOffsetsSpec spec = new ListShareGroupOffsetsSpec().topicPartitions(List.of(partition));
            eventually("no lag", () -> admin.listShareGroupOffsets(Map.of(group, spec))
                    .partitionsToOffsetInfo(group).get().get(partition).lag().equals(java.util.Optional.of(0L)));
            admin.alterShareGroupOffsets(group, Map.of(partition, 1L)).all().get();
            assertEquals(1L, admin.listShareGroupOffsets(Map.of(group, spec)).partitionsToOffsetInfo(group).get()
                    .get(partition).startOffset());
            admin.deleteShareGroupOffsets(group, Set.of(topic)).all().get();
            admin.deleteShareGroups(List.of(group)).all().get();
            assertInstanceOf(GroupIdNotFoundException.class,
                    failure(admin.describeShareGroups(List.of(group)).all()));
        }
    }

    @Test
    void offsetsAreListedRecordsDeletedAndLeadersAlreadyPreferred() throws Exception {
        String topic = Brokers.unique("admin-offsets");
        Brokers.createTopic(topic, 1);
        long[] timestamps = {1_000, 5_000, 3_000, 5_000, 2_000};
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Brokers.producerConfig())) {
            for (long timestamp : timestamps) {
                producer.send(new ProducerRecord<>(topic, 0, timestamp, "k", "at " + timestamp)).get();
            }
        }
        TopicPartition partition = new TopicPartition(topic, 0);
        try (Admin admin = Brokers.admin()) {
            assertEquals(1L, admin.listOffsets(Map.of(partition, OffsetSpec.forTimestamp(2_500))).all().get()
                    .get(partition).offset());
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> latest =
                    admin.listOffsets(Map.of(partition, OffsetSpec.latest())).all().get();
            assertEquals(5L, latest.get(partition).offset());
            ListOffsetsResult.ListOffsetsResultInfo newest =
                    admin.listOffsets(Map.of(partition, OffsetSpec.maxTimestamp())).all().get().get(partition);
            assertEquals(1L, newest.offset()); // the first record with the greatest timestamp
            assertEquals(5_000L, newest.timestamp());
            assertEquals(2L, admin.deleteRecords(Map.of(partition, RecordsToDelete.beforeOffset(2))).lowWatermarks()
                    .get(partition).get().lowWatermark());
            assertEquals(2L, admin.listOffsets(Map.of(partition, OffsetSpec.earliest())).all().get()
                    .get(partition).offset());
            Throwable notNeeded = admin.electLeaders(ElectionType.PREFERRED, Set.of(partition)).partitions().get()
                    .get(partition).orElseThrow();
            assertInstanceOf(ElectionNotNeededException.class, notNeeded);
        }
    }

    @Test
    void clusterQuorumFeaturesAndLogDirsAreDescribed() throws Exception {
        String topic = Brokers.unique("admin-logdirs");
        Brokers.createTopic(topic, 1);
        Brokers.produce(topic, 1, 3);
        try (Admin admin = Brokers.admin()) {
            DescribeClusterResult cluster = admin.describeCluster();
            assertEquals(1, cluster.nodes().get().size());
            assertFalse(cluster.clusterId().get().isEmpty());
            int node = nodeId(admin);
            assertEquals(node, cluster.controller().get().id());

            QuorumInfo quorum = admin.describeMetadataQuorum().quorumInfo().get();
            assertEquals(node, quorum.leaderId());
            assertEquals(1, quorum.voters().size());
            // trafka's memory store keeps no metadata log, so its quorum's high watermark is 0 there.
            assertEquals(quorum.highWatermark(), quorum.voters().get(0).logEndOffset());

            FeatureMetadata features = admin.describeFeatures().featureMetadata().get();
            assertTrue(features.finalizedFeatures().containsKey("metadata.version"), features.toString());
            short groupVersion = features.finalizedFeatures().get("group.version").maxVersionLevel();
            admin.updateFeatures(Map.of("group.version", new FeatureUpdate(groupVersion,
                    FeatureUpdate.UpgradeType.UPGRADE)), new UpdateFeaturesOptions().validateOnly(true)).all().get();

            Map<String, LogDirDescription> dirs = admin.describeLogDirs(List.of(node)).allDescriptions().get().get(node);
            assertEquals(1, dirs.size());
            LogDirDescription dir = dirs.values().iterator().next();
            assertTrue(dir.replicaInfos().get(new TopicPartition(topic, 0)).size() > 0, dir.toString());
        }
    }

    @Test
    void openTransactionsAndTheirProducersAreDescribed() throws Exception {
        String topic = Brokers.unique("admin-txn");
        String transactionalId = Brokers.unique("admin-txn-id");
        Brokers.createTopic(topic, 1);
        TopicPartition partition = new TopicPartition(topic, 0);
        Map<String, Object> config = Brokers.producerConfig();
        config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        try (Admin admin = Brokers.admin(); KafkaProducer<String, String> producer = new KafkaProducer<>(config)) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, "k", "open")).get();
            Collection<TransactionListing> listed = admin.listTransactions().all().get();
            assertTrue(listed.stream().anyMatch(t -> t.transactionalId().equals(transactionalId)
                    && t.state() == TransactionState.ONGOING), listed.toString());
            TransactionDescription described =
                    admin.describeTransactions(List.of(transactionalId)).all().get().get(transactionalId);
            assertEquals(TransactionState.ONGOING, described.state());
            assertEquals(Set.of(partition), described.topicPartitions());
            List<ProducerState> producers =
                    admin.describeProducers(List.of(partition)).all().get().get(partition).activeProducers();
            assertEquals(1, producers.size());
            assertEquals(described.producerId(), producers.get(0).producerId());
            assertEquals(java.util.OptionalLong.of(0L), producers.get(0).currentTransactionStartOffset());
            producer.abortTransaction();
            eventually("the transaction over", () -> admin.describeTransactions(List.of(transactionalId)).all().get()
                    .get(transactionalId).state() == TransactionState.COMPLETE_ABORT);
        }
    }

    @Test
    void clientQuotasAndScramUsersAreAlteredAndDescribed() throws Exception {
        String user = Brokers.unique("user");
        ClientQuotaEntity entity = new ClientQuotaEntity(Map.of(ClientQuotaEntity.USER, user));
        ClientQuotaFilter filter = ClientQuotaFilter.containsOnly(
                List.of(ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.USER, user)));
        try (Admin admin = Brokers.admin()) {
            admin.alterClientQuotas(List.of(new ClientQuotaAlteration(entity,
                    List.of(new ClientQuotaAlteration.Op("producer_byte_rate", 1024.0))))).all().get();
            eventually("the quota", () -> Map.of(entity, Map.of("producer_byte_rate", 1024.0))
                    .equals(admin.describeClientQuotas(filter).entities().get()));
            admin.alterClientQuotas(List.of(new ClientQuotaAlteration(entity,
                    List.of(new ClientQuotaAlteration.Op("producer_byte_rate", null))))).all().get();
            eventually("no quota", () -> admin.describeClientQuotas(filter).entities().get().isEmpty());

            UserScramCredentialAlteration upsert = new UserScramCredentialUpsertion(user,
                    new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192), "secret");
            admin.alterUserScramCredentials(List.of(upsert)).all().get();
            // Kafka answers an alteration once its controller committed it; the broker answering the
            // describe applies it from the metadata log a moment later: both are waited for.
            eventually("the credential", () -> {
                try {
                    UserScramCredentialsDescription described =
                            admin.describeUserScramCredentials(List.of(user)).description(user).get();
                    return List.of(new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192))
                            .equals(described.credentialInfos());
                } catch (ExecutionException notYet) {
                    return false;
                }
            });
            admin.alterUserScramCredentials(List.of(
                    new UserScramCredentialDeletion(user, ScramMechanism.SCRAM_SHA_256))).all().get();
            eventually("no credential", () -> {
                try {
                    admin.describeUserScramCredentials(List.of(user)).description(user).get();
                    return false;
                } catch (ExecutionException gone) {
                    assertInstanceOf(ResourceNotFoundException.class, gone.getCause());
                    return true;
                }
            });
        }
    }

    @Test
    void aclsAreCreatedDescribedAndDeleted() throws Exception {
        String prefix = Brokers.unique("acl");
        AclBinding binding = new AclBinding(new ResourcePattern(ResourceType.TOPIC, prefix, PatternType.PREFIXED),
                new AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW));
        AclBindingFilter filter = new AclBindingFilter(
                new ResourcePatternFilter(ResourceType.TOPIC, prefix, PatternType.PREFIXED), AccessControlEntryFilter.ANY);
        try (Admin admin = Brokers.admin()) {
            admin.createAcls(List.of(binding)).all().get();
            eventually("the ACL", () -> admin.describeAcls(filter).values().get().equals(List.of(binding)));
            assertEquals(List.of(binding), List.copyOf(admin.deleteAcls(List.of(filter)).all().get()));
            eventually("no ACL", () -> admin.describeAcls(filter).values().get().isEmpty());
        }
    }

    @Test
    void delegationTokenRequestsOnPlaintextAreRefusedAsKafkaRefusesThem() throws Exception {
        // Kafka allows token requests only on authenticated channels (SASL, two-way TLS): the Java
        // client's every token call fails with UnsupportedByAuthenticationException on PLAINTEXT.
        try (Admin admin = Brokers.admin()) {
            assertInstanceOf(UnsupportedByAuthenticationException.class,
                    failure(admin.createDelegationToken().delegationToken()));
            assertInstanceOf(UnsupportedByAuthenticationException.class,
                    failure(admin.describeDelegationToken().delegationTokens()));
            assertInstanceOf(UnsupportedByAuthenticationException.class,
                    failure(admin.renewDelegationToken(new byte[] {1, 2, 3}).expiryTimestamp()));
            assertInstanceOf(UnsupportedByAuthenticationException.class,
                    failure(admin.expireDelegationToken(new byte[] {1, 2, 3}).expiryTimestamp()));
        }
    }
}
