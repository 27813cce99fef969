'use strict'
// KafkaJS 2.2.4 admin client against a real trafka broker (filesystem store).

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { AssignerProtocol, ConfigResourceTypes } = require('kafkajs')
const { Broker, kafkaFor, unique, waitFor, within, consumeAll } = require('./helpers')

describe('KafkaJS admin', () => {
  let broker
  let kafka
  let admin
  let producer

  before(async () => {
    broker = await new Broker().start()
    kafka = kafkaFor(broker)
    admin = kafka.admin()
    await admin.connect()
    producer = kafka.producer()
    await producer.connect()
  })

  after(async () => {
    await producer?.disconnect()
    await admin?.disconnect()
    if (broker?.process) assert.equal(await broker.stop(), 0, broker.log())
  })

  /** A group that consumed `topic` and committed `count` messages, then left (state Empty). */
  async function committedGroup(topic, count) {
    const groupId = unique('admin-group')
    await consumeAll(kafka, topic, count, { groupId })
    return groupId
  }

  it('describeCluster names this broker, the controller and the log dir cluster id', async () => {
    const cluster = await admin.describeCluster()
    const meta = fs.readFileSync(path.join(broker.dataDir, 'meta.properties'), 'utf8')
    const clusterId = /^cluster\.id=(.*)$/m.exec(meta)[1]
    assert.deepEqual(cluster, {
      brokers: [{ nodeId: 1, host: '127.0.0.1', port: broker.port }],
      controller: 1,
      clusterId,
    })
  })

  it('createTopics with waitForLeaders, configs, validateOnly; an existing topic gives false', async () => {
    const topic = unique('created')
    const created = await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic, numPartitions: 3, configEntries: [{ name: 'retention.ms', value: '3600000' }] }],
    })
    assert.equal(created, true)
    assert.ok((await admin.listTopics()).includes(topic))
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] })
    assert.deepEqual(
      topics[0].partitions.map(p => [p.partitionId, p.leader, p.partitionErrorCode]).sort(),
      [[0, 1, 0], [1, 1, 0], [2, 1, 0]]
    )
    for (const p of [0, 1, 2]) assert.ok(fs.existsSync(path.join(broker.dataDir, `${topic}-${p}`)))

    assert.equal(await admin.createTopics({ topics: [{ topic }] }), false, 'already exists')

    const dry = unique('dry-run')
    // (waitForLeaders must be off: KafkaJS would wait for leaders of a topic validateOnly did not create)
    assert.equal(
      await admin.createTopics({ validateOnly: true, waitForLeaders: false, topics: [{ topic: dry, numPartitions: 2 }] }),
      true
    )
    assert.ok(!(await admin.listTopics()).includes(dry), 'validateOnly creates nothing')

    await assert.rejects(
      admin.createTopics({ topics: [{ topic: unique('bad-rf'), replicationFactor: 3 }] }),
      err => {
        assert.equal(err.name, 'KafkaJSAggregateError')
        assert.equal(err.errors.length, 1)
        assert.equal(err.errors[0].type, 'INVALID_REPLICATION_FACTOR')
        return true
      }
    )
  })

  it('listTopics, fetchTopicMetadata for several topics', async () => {
    const [a, b] = [unique('list-a'), unique('list-b')]
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic: a }, { topic: b, numPartitions: 2 }] })
    const listed = await admin.listTopics()
    assert.ok(listed.includes(a) && listed.includes(b))
    const { topics } = await admin.fetchTopicMetadata({ topics: [a, b] })
    assert.deepEqual(
      topics.map(t => [t.name, t.partitions.length]).sort(),
      [[a, 1], [b, 2]].sort()
    )
  })

  it('deleteTopics removes the topic and its partition directories', async () => {
    const topic = unique('doomed')
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 2 }] })
    await producer.send({ topic, messages: [{ partition: 1, value: 'x' }] })
    await admin.deleteTopics({ topics: [topic], timeout: 5000 })
    assert.ok(!(await admin.listTopics()).includes(topic))
    await waitFor(() => !fs.existsSync(path.join(broker.dataDir, `${topic}-1`)), {
      what: 'the partition directory to go',
    })
    // UNKNOWN_TOPIC_OR_PARTITION (3) is retriable for KafkaJS: with no retries it gives up at once.
    const impatient = kafka.admin({ retry: { retries: 0 } })
    await impatient.connect()
    try {
      await assert.rejects(impatient.deleteTopics({ topics: [topic], timeout: 5000 }), err => {
        assert.equal(err.name, 'KafkaJSNumberOfRetriesExceeded')
        assert.equal(err.message, 'This server does not host this topic-partition')
        return true
      })
    } finally {
      await impatient.disconnect()
    }
  })

  it('createPartitions grows a topic, and the new partition takes records', async () => {
    const topic = unique('grow')
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic }] })
    await admin.createPartitions({ topicPartitions: [{ topic, count: 3 }] })
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] })
    assert.deepEqual(topics[0].partitions.map(p => p.partitionId).sort(), [0, 1, 2])
    const [meta] = await producer.send({ topic, messages: [{ partition: 2, value: 'new' }] })
    assert.deepEqual([meta.partition, meta.baseOffset], [2, '0'])
    await assert.rejects(admin.createPartitions({ topicPartitions: [{ topic, count: 2 }] }), err => {
      assert.equal(err.name, 'KafkaJSProtocolError')
      assert.deepEqual([err.type, err.code], ['INVALID_PARTITIONS', 37])
      return true
    })
  })

  it('fetchTopicOffsets, deleteTopicRecords and fetchTopicOffsetsByTimestamp', async () => {
    const topic = unique('offsets')
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 2 }] })
    const base = Date.now() - 100000
    await producer.send({
      topic,
      messages: [0, 1, 2, 3, 4].map(i => ({ partition: 0, value: `v${i}`, timestamp: String(base + i * 1000) })),
    })
    await producer.send({
      topic,
      messages: [0, 1].map(i => ({ partition: 1, value: `w${i}`, timestamp: String(base + i * 1000) })),
    })
    const sorted = list => list.slice().sort((x, y) => x.partition - y.partition)
    assert.deepEqual(sorted(await admin.fetchTopicOffsets(topic)), [
      { partition: 0, offset: '5', high: '5', low: '0' },
      { partition: 1, offset: '2', high: '2', low: '0' },
    ])

    assert.deepEqual(sorted(await admin.fetchTopicOffsetsByTimestamp(topic, base + 2500)), [
      { partition: 0, offset: '3' },
      { partition: 1, offset: '2' }, // no record that late: KafkaJS substitutes the high watermark
    ])
    assert.deepEqual(sorted(await admin.fetchTopicOffsetsByTimestamp(topic, base)), [
      { partition: 0, offset: '0' },
      { partition: 1, offset: '0' },
    ])

    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '2' }] })
    assert.deepEqual(sorted(await admin.fetchTopicOffsets(topic)), [
      { partition: 0, offset: '5', high: '5', low: '2' },
      { partition: 1, offset: '2', high: '2', low: '0' },
    ])
  })

  it('fetchOffsets, setOffsets and resetOffsets on an empty group', async () => {
    // (setOffsets, resetOffsets and fetchOffsets' resolveOffsets run a paused KafkaJS consumer that
    // sleeps its default 5 s maxWaitTimeInMs before committing: each takes about 5 s, whatever the broker.)
    const topic = unique('group-offsets')
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 2 }] })
    await producer.send({ topic, messages: [0, 1, 2, 3].map(i => ({ partition: 0, value: `a${i}` })) })
    await producer.send({ topic, messages: [0, 1].map(i => ({ partition: 1, value: `b${i}` })) })
    const groupId = await committedGroup(topic, 6)
    const offsets = async (resolveOffsets = false) =>
      (await admin.fetchOffsets({ groupId, topics: [topic], resolveOffsets }))[0].partitions
        .map(({ partition, offset }) => [partition, offset])
        .sort()
    assert.deepEqual(await offsets(), [[0, '4'], [1, '2']])

    await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '1' }] })
    assert.deepEqual(await offsets(), [[0, '1'], [1, '2']])

    // resetOffsets commits the logical offsets -2 (earliest) / -1 (latest), as KafkaJS does against
    // Kafka (a KafkaJS consumer takes any negative committed offset as none, and falls back on its
    // own fromBeginning); fetchOffsets' resolveOffsets turns them into real offsets and commits those.
    await admin.resetOffsets({ groupId, topic, earliest: true })
    assert.deepEqual(await offsets(), [[0, '-2'], [1, '-2']])
    assert.deepEqual(await offsets(true), [[0, '0'], [1, '0']])
    assert.deepEqual(await offsets(), [[0, '0'], [1, '0']])
    const again = await consumeAll(kafka, topic, 6, { groupId, fromBeginning: false })
    assert.deepEqual(again.map(m => m.value.toString()).sort(), ['a0', 'a1', 'a2', 'a3', 'b0', 'b1'])
    assert.deepEqual(await offsets(), [[0, '4'], [1, '2']])

    await producer.send({ topic, messages: [{ partition: 1, value: 'b2' }] })
    await admin.resetOffsets({ groupId, topic })
    assert.deepEqual(await offsets(), [[0, '-1'], [1, '-1']])

    // A group that never committed: -1 for every partition asked for.
    const fresh = await admin.fetchOffsets({ groupId: unique('never'), topics: [topic] })
    assert.deepEqual(
      fresh[0].partitions.map(({ partition, offset }) => [partition, offset]).sort(),
      [[0, '-1'], [1, '-1']]
    )
  })

  it('setOffsets refuses a group with running members', async () => {
    const topic = unique('busy')
    await producer.send({ topic, messages: [{ value: 'x' }] })
    const groupId = unique('busy-group')
    const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 200, heartbeatInterval: 300 })
    await consumer.connect()
    try {
      await consumer.subscribe({ topic, fromBeginning: true })
      const got = []
      await consumer.run({ eachMessage: async ({ message }) => void got.push(message) })
      await waitFor(() => got.length === 1, { what: 'the consumer to run' })
      await assert.rejects(admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '0' }] }), err => {
        assert.equal(err.message, 'The consumer group must have no running instances, current state: Stable')
        return true
      })
    } finally {
      await consumer.disconnect()
    }
  })

  it('describeGroups, listGroups and deleteGroups', async () => {
    const topic = unique('described')
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 2 }] })
    await producer.send({ topic, messages: [{ partition: 0, value: 'x' }, { partition: 1, value: 'y' }] })
    const groupId = unique('live-group')
    const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 200, heartbeatInterval: 300 })
    await consumer.connect()
    try {
      await consumer.subscribe({ topic, fromBeginning: true })
      const got = []
      await consumer.run({ eachMessage: async ({ message }) => void got.push(message) })
      await waitFor(() => got.length === 2, { what: 'the consumer to run' })

      const { groups } = await admin.describeGroups([groupId])
      assert.equal(groups.length, 1)
      const [group] = groups
      assert.deepEqual(
        { groupId: group.groupId, state: group.state, protocolType: group.protocolType, protocol: group.protocol, errorCode: group.errorCode },
        { groupId, state: 'Stable', protocolType: 'consumer', protocol: 'RoundRobinAssigner', errorCode: 0 }
      )
      assert.equal(group.members.length, 1)
      assert.equal(group.members[0].clientId, 'trafka-kafkajs')
      const assignment = AssignerProtocol.MemberAssignment.decode(group.members[0].memberAssignment)
      assert.deepEqual(assignment.assignment[topic].slice().sort(), [0, 1])
      const metadata = AssignerProtocol.MemberMetadata.decode(group.members[0].memberMetadata)
      assert.deepEqual(metadata.topics, [topic])

      const listed = (await admin.listGroups()).groups
      assert.deepEqual(listed.find(g => g.groupId === groupId), { groupId, protocolType: 'consumer' })

      await assert.rejects(admin.deleteGroups([groupId]), err => {
        assert.equal(err.name, 'KafkaJSDeleteGroupsError')
        assert.deepEqual(
          err.groups.map(g => [g.groupId, g.errorCode, g.error.type]),
          [[groupId, 68, 'NON_EMPTY_GROUP']]
        )
        return true
      })
    } finally {
      await consumer.disconnect()
    }

    const [empty] = (await admin.describeGroups([groupId])).groups
    assert.deepEqual([empty.state, empty.members], ['Empty', []])
    assert.deepEqual(await admin.deleteGroups([groupId]), [{ groupId, errorCode: 0 }])
    assert.ok(!(await admin.listGroups()).groups.some(g => g.groupId === groupId))
    const [gone] = (await admin.describeGroups([groupId])).groups
    assert.equal(gone.state, 'Dead')
    await assert.rejects(admin.deleteGroups([groupId]), err => {
      assert.deepEqual(err.groups.map(g => [g.errorCode, g.error.type]), [[69, 'GROUP_ID_NOT_FOUND']])
      return true
    })
  })

  it('describeConfigs for a topic (defaults and overrides) and for the broker', async () => {
    const topic = unique('configs')
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] }],
    })
    const { resources } = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['cleanup.policy', 'retention.ms'] }],
    })
    assert.equal(resources.length, 1)
    assert.deepEqual([resources[0].errorCode, resources[0].resourceName], [0, topic])
    const entries = Object.fromEntries(resources[0].configEntries.map(e => [e.configName, e]))
    assert.deepEqual(Object.keys(entries).sort(), ['cleanup.policy', 'retention.ms'])
    assert.deepEqual(
      [entries['cleanup.policy'].configValue, entries['cleanup.policy'].isDefault, entries['cleanup.policy'].configSource],
      ['compact', false, 1] // 1 = DYNAMIC_TOPIC_CONFIG
    )
    assert.deepEqual(
      [entries['retention.ms'].configValue, entries['retention.ms'].isDefault, entries['retention.ms'].configSource],
      ['604800000', true, 5] // 5 = DEFAULT_CONFIG
    )

    const all = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }] })
    assert.ok(all.resources[0].configEntries.length > 5, 'every topic config without configNames')

    const brokerConfigs = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.BROKER, name: '1' }],
    })
    assert.deepEqual([brokerConfigs.resources[0].errorCode, brokerConfigs.resources[0].resourceName], [0, '1'])
    assert.ok(brokerConfigs.resources[0].configEntries.length > 0)
  })

  it('alterConfigs replaces a topic\'s config overrides', async () => {
    const topic = unique('alter')
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic, configEntries: [{ name: 'segment.bytes', value: '1048576' }] }] })
    await admin.alterConfigs({
      validateOnly: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries: [{ name: 'retention.ms', value: '1000' }] }],
    })
    const { resources } = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['retention.ms', 'segment.bytes'] }],
    })
    const values = Object.fromEntries(resources[0].configEntries.map(e => [e.configName, e.configValue]))
    // AlterConfigs (unlike IncrementalAlterConfigs) replaces every override: segment.bytes is back to its default.
    assert.deepEqual(values, { 'retention.ms': '1000', 'segment.bytes': '1073741824' })
  })

  it('ACL calls fail with SECURITY_DISABLED, as on a Kafka broker without an authorizer', async () => {
    const topic = unique('acl')
    const acl = {
      resourceType: 2, // TOPIC
      resourceName: topic,
      resourcePatternType: 3, // LITERAL
      principal: 'User:alice',
      host: '*',
      operation: 2, // ALL
      permissionType: 2, // DENY
    }
    const calls = [
      ['describeAcls', () => admin.describeAcls(acl)],
      ['createAcls', () => admin.createAcls({ acl: [acl] })],
      ['deleteAcls', () => admin.deleteAcls({ filters: [acl] })],
    ]
    for (const [name, call] of calls) {
      await assert.rejects(within(10000, call(), name), err => {
        const types = [err.type, ...(err.errors || []).map(e => e.type)]
        assert.ok(types.includes('SECURITY_DISABLED'), `${name}: ${err.name} ${err.message} ${types}`)
        return true
      })
    }
  })

  it('partition reassignments are no-ops onto this broker and refused onto any other', async () => {
    const topic = unique('reassign')
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic }] })
    await admin.alterPartitionReassignments({ topics: [{ topic, partitionAssignment: [{ partition: 0, replicas: [1] }] }] })
    await assert.rejects(
      admin.alterPartitionReassignments({ topics: [{ topic, partitionAssignment: [{ partition: 0, replicas: [2] }] }] }),
      err => {
        const types = [err.type, ...(err.errors || []).map(e => e.type)]
        assert.ok(types.includes('INVALID_REPLICA_ASSIGNMENT'), `${err.name} ${err.message} ${types}`)
        return true
      },
    )
    const listed = await admin.listPartitionReassignments({ topics: [{ topic, partitions: [0] }] })
    assert.deepEqual(listed.topics, [])
  })
})
