'use strict'
// KafkaJS 2.2.4 producer against a real trafka broker (filesystem store).

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { CompressionTypes } = require('kafkajs')
const { Broker, kafkaFor, unique, sleep, waitFor, within, consumeAll, apiVersions, segmentBatches } = require('./helpers')

describe('KafkaJS producer', () => {
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

  it('auto-creates a topic on the first send', async () => {
    const topic = unique('auto')
    assert.ok(!(await admin.listTopics()).includes(topic))
    const result = await producer.send({ topic, messages: [{ value: 'first' }] })
    assert.deepEqual(
      result.map(({ topicName, partition, errorCode, baseOffset }) => ({ topicName, partition, errorCode, baseOffset })),
      [{ topicName: topic, partition: 0, errorCode: 0, baseOffset: '0' }]
    )
    assert.ok((await admin.listTopics()).includes(topic))
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] })
    assert.equal(topics.length, 1)
    assert.deepEqual(
      topics[0].partitions.map(({ partitionId, leader, replicas, isr }) => ({ partitionId, leader, replicas, isr })),
      [{ partitionId: 0, leader: 1, replicas: [1], isr: [1] }]
    )
    assert.ok(fs.existsSync(path.join(broker.dataDir, `${topic}-0`)), 'the partition directory is in the log dir')
  })

  it('does not create a topic when allowAutoTopicCreation is false', async () => {
    const topic = unique('noauto')
    const strict = kafka.producer({ allowAutoTopicCreation: false, retry: { retries: 1, initialRetryTime: 50 } })
    await strict.connect()
    try {
      await assert.rejects(within(20000, strict.send({ topic, messages: [{ value: 'x' }] })), err => {
        // Metadata answers UNKNOWN_TOPIC_OR_PARTITION (3); KafkaJS retries, then gives up with its message.
        assert.equal(err.name, 'KafkaJSNumberOfRetriesExceeded')
        assert.equal(err.message, 'This server does not host this topic-partition')
        return true
      })
    } finally {
      await strict.disconnect()
    }
    assert.ok(!(await admin.listTopics()).includes(topic))
  })

  it('sends keys, headers and GZIP-compressed values that a consumer reads back', async () => {
    const topic = unique('gzip')
    const messages = [
      { key: 'k1', value: 'v1'.repeat(200), headers: { trace: 'a', 'content-type': 'text/plain' } },
      { key: 'k2', value: 'v2'.repeat(200), headers: { trace: 'b' } },
      { key: null, value: 'v3', headers: {} },
    ]
    const [meta] = await producer.send({ topic, compression: CompressionTypes.GZIP, messages })
    assert.equal(meta.baseOffset, '0')

    const batches = segmentBatches(broker, topic)
    assert.equal(batches.length, 1)
    assert.equal(batches[0].compression, 1, 'the batch is stored GZIP-compressed, as sent')
    assert.equal(batches[0].recordCount, 3)

    const got = await consumeAll(kafka, topic, 3)
    assert.deepEqual(
      got.map(m => ({
        offset: m.offset,
        key: m.key?.toString() ?? null,
        value: m.value.toString(),
        headers: Object.fromEntries(Object.entries(m.headers).map(([k, v]) => [k, v.toString()])),
      })),
      [
        { offset: '0', key: 'k1', value: 'v1'.repeat(200), headers: { trace: 'a', 'content-type': 'text/plain' } },
        { offset: '1', key: 'k2', value: 'v2'.repeat(200), headers: { trace: 'b' } },
        { offset: '2', key: null, value: 'v3', headers: {} },
      ]
    )
  })

  it('honours acks -1, 1 and 0', async () => {
    const topic = unique('acks')
    await admin.createTopics({ topics: [{ topic }], waitForLeaders: true })
    const all = await producer.send({ topic, acks: -1, messages: [{ value: 'all' }] })
    assert.deepEqual([all[0].errorCode, all[0].baseOffset], [0, '0'])
    const leader = await producer.send({ topic, acks: 1, messages: [{ value: 'leader' }, { value: 'leader2' }] })
    assert.deepEqual([leader[0].errorCode, leader[0].baseOffset], [0, '1'])
    // acks=0: the broker sends no response, and KafkaJS resolves with no record metadata.
    const none = await producer.send({ topic, acks: 0, messages: [{ value: 'none' }] })
    assert.deepEqual(none, [])
    await waitFor(async () => (await admin.fetchTopicOffsets(topic))[0].high === '4', {
      what: 'the acks=0 record to be appended',
    })
    const got = await consumeAll(kafka, topic, 4)
    assert.deepEqual(got.map(m => `${m.offset}:${m.value}`), ['0:all', '1:leader', '2:leader2', '3:none'])
  })

  it('sends to many topics and partitions in one sendBatch', async () => {
    const [a, b, c] = [unique('batch-a'), unique('batch-b'), unique('batch-c')]
    await admin.createTopics({ topics: [{ topic: c, numPartitions: 3 }], waitForLeaders: true })
    const result = await producer.sendBatch({
      topicMessages: [
        { topic: a, messages: [{ value: 'a0' }, { value: 'a1' }] },
        { topic: b, messages: [{ value: 'b0' }] },
        { topic: c, messages: [{ partition: 0, value: 'c0' }, { partition: 2, value: 'c2' }, { partition: 2, value: 'c2b' }] },
      ],
    })
    const summary = result
      .map(({ topicName, partition, errorCode, baseOffset }) => `${topicName}/${partition}@${baseOffset}:${errorCode}`)
      .sort()
    assert.deepEqual(summary, [`${a}/0@0:0`, `${b}/0@0:0`, `${c}/0@0:0`, `${c}/2@0:0`].sort())
    assert.deepEqual(
      (await admin.fetchTopicOffsets(c)).map(({ partition, high }) => [partition, high]).sort(),
      [[0, '1'], [1, '0'], [2, '2']]
    )
    assert.deepEqual((await admin.fetchTopicOffsets(a)).map(p => p.high), ['2'])
    assert.deepEqual((await admin.fetchTopicOffsets(b)).map(p => p.high), ['1'])
  })

  it('idempotent producer: InitProducerId gives an id, batches carry it with consecutive sequences', async () => {
    // KafkaJS sends InitProducerId v1 (its highest; trafka serves 0-5). Were it not advertised,
    // connect() would reject at once with KafkaJSServerDoesNotSupportApiKey (apiKey 22).
    const apis = await apiVersions(broker)
    assert.ok(apis.has(22), 'InitProducerId is advertised')
    const topic = unique('idem')
    const idempotent = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })
    await idempotent.connect()
    try {
      await idempotent.send({ topic, acks: -1, messages: [{ value: 'i0' }, { value: 'i1' }] })
      await idempotent.send({ topic, acks: -1, messages: [{ value: 'i2' }] })
    } finally {
      await idempotent.disconnect()
    }
    const batches = segmentBatches(broker, topic)
    assert.equal(batches.length, 2)
    assert.ok(batches[0].producerId >= 0)
    assert.deepEqual(
      batches.map(b => [b.producerId, b.producerEpoch, b.baseSequence, b.recordCount, b.isTransactional]),
      [
        [batches[0].producerId, 0, 0, 2, false],
        [batches[0].producerId, 0, 2, 1, false],
      ]
    )
    const got = await consumeAll(kafka, topic, 3)
    assert.deepEqual(got.map(m => `${m.offset}:${m.value}`), ['0:i0', '1:i1', '2:i2'])
  })

  it('transactional producer: commit, abort, sendOffsets; read_committed skips the aborted records', async () => {
    // KafkaJS: FindCoordinator v2 (key type 1), InitProducerId v1, AddPartitionsToTxn v1,
    // AddOffsetsToTxn v1, TxnOffsetCommit v1, EndTxn v1.
    const apis = await apiVersions(broker)
    for (const key of [22, 24, 25, 26, 28]) assert.ok(apis.has(key), `API ${key} is advertised`)
    const transactionalId = unique('tx')
    const topic = unique('txn')
    const source = unique('txn-source')
    const groupId = unique('txn-group')
    await admin.createTopics({ topics: [{ topic }, { topic: source }], waitForLeaders: true })
    await producer.send({ topic: source, messages: [{ value: 'in0' }, { value: 'in1' }] })
    const transactional = kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 })
    const readCommitted = []
    await transactional.connect()
    try {
      const committed = await within(20000, transactional.transaction(), 'begin')
      await committed.send({ topic, messages: [{ value: 'c0' }, { value: 'c1' }] })
      await committed.sendOffsets({ consumerGroupId: groupId, topics: [{ topic: source, partitions: [{ partition: 0, offset: '2' }] }] })
      await within(20000, committed.commit(), 'commit')

      const aborted = await within(20000, transactional.transaction(), 'begin')
      await aborted.send({ topic, messages: [{ value: 'a0' }] })
      await within(20000, aborted.abort(), 'abort')

      // While a transaction is open, read_committed (KafkaJS's default) stops before it: the last
      // stable offset. Its records arrive once it commits.
      const last = await within(20000, transactional.transaction(), 'begin')
      await last.send({ topic, messages: [{ value: 'c2' }] })
      const reader = kafka.consumer({ groupId: unique('g'), maxWaitTimeInMs: 200 })
      await reader.connect()
      try {
        await reader.subscribe({ topic, fromBeginning: true })
        await reader.run({ eachMessage: async ({ message }) => void readCommitted.push(`${message.offset}:${message.value}`) })
        await waitFor(() => readCommitted.length >= 2, { what: 'the committed records' })
        await sleep(500)
        assert.deepEqual(readCommitted, ['0:c0', '1:c1'], 'nothing past the open transaction')
        await within(20000, last.commit(), 'commit')
        await waitFor(() => readCommitted.length >= 3, { what: 'the record of the committed transaction' })
        await sleep(300)
      } finally {
        await reader.disconnect()
      }
    } finally {
      await transactional.disconnect()
    }
    // read_committed skipped the aborted record; neither reader sees the markers.
    assert.deepEqual(readCommitted, ['0:c0', '1:c1', '5:c2'])

    // Offsets sent in the transaction are the group's committed offsets.
    assert.deepEqual(await admin.fetchOffsets({ groupId, topics: [source] }), [
      { topic: source, partitions: [{ partition: 0, offset: '2', metadata: null }] },
    ])
    // Data batches and a control batch (commit/abort marker) per transaction: 3 + 3 offsets.
    const batches = segmentBatches(broker, topic)
    assert.deepEqual(
      batches.map(b => [b.baseOffset, b.recordCount, b.isTransactional, b.isControl]),
      [
        [0, 2, true, false],
        [2, 1, true, true],
        [3, 1, true, false],
        [4, 1, true, true],
        [5, 1, true, false],
        [6, 1, true, true],
      ]
    )
    const uncommitted = kafka.consumer({ groupId: unique('g'), readUncommitted: true, maxWaitTimeInMs: 200 })
    const all = []
    await uncommitted.connect()
    try {
      await uncommitted.subscribe({ topic, fromBeginning: true })
      await uncommitted.run({ eachMessage: async ({ message }) => void all.push(`${message.offset}:${message.value}`) })
      await waitFor(() => all.length >= 4, { what: 'four records read uncommitted' })
    } finally {
      await uncommitted.disconnect()
    }
    assert.deepEqual(all, ['0:c0', '1:c1', '3:a0', '5:c2'])
    assert.deepEqual((await admin.fetchTopicOffsets(topic)).map(p => p.high), ['7'])
  })
})
