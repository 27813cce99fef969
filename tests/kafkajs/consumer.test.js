'use strict'
// KafkaJS 2.2.4 consumers and consumer groups against a real trafka broker (filesystem store).

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { Broker, kafkaFor, unique, sleep, waitFor, consumeAll } = require('./helpers')

const FAST = { maxWaitTimeInMs: 200, heartbeatInterval: 300, sessionTimeout: 10000, rebalanceTimeout: 10000 }

describe('KafkaJS consumer', () => {
  let broker
  let kafka
  let admin
  let producer
  const running = new Set()

  /** A connected consumer, disconnected in after() if the test did not. */
  async function consumer(options = {}) {
    const c = kafka.consumer({ groupId: unique('g'), ...FAST, ...options })
    await c.connect()
    running.add(c)
    return c
  }

  async function disconnect(c) {
    running.delete(c)
    await c.disconnect()
  }

  async function produceValues(topic, values, extra = {}) {
    return producer.send({ topic, messages: values.map(value => ({ value, ...extra })) })
  }

  before(async () => {
    broker = await new Broker().start()
    kafka = kafkaFor(broker)
    admin = kafka.admin()
    await admin.connect()
    producer = kafka.producer()
    await producer.connect()
  })

  after(async () => {
    for (const c of running) await c.disconnect()
    await producer?.disconnect()
    await admin?.disconnect()
    if (broker?.process) assert.equal(await broker.stop(), 0, broker.log())
  })

  it('eachMessage delivers every message with its offset, key and value', async () => {
    const topic = unique('each-message')
    await producer.send({ topic, messages: [0, 1, 2, 3, 4].map(i => ({ key: `k${i}`, value: `v${i}` })) })
    const got = await consumeAll(kafka, topic, 5)
    assert.deepEqual(
      got.map(m => [m.topic, m.partition, m.offset, m.key.toString(), m.value.toString()]),
      [0, 1, 2, 3, 4].map(i => [topic, 0, String(i), `k${i}`, `v${i}`])
    )
    for (const m of got) assert.ok(Math.abs(Number(m.timestamp) - Date.now()) < 60000, 'a create-time timestamp')
  })

  it('eachBatch delivers batches with their high watermark', async () => {
    const topic = unique('each-batch')
    await produceValues(topic, Array.from({ length: 10 }, (_, i) => `b${i}`))
    await produceValues(topic, Array.from({ length: 5 }, (_, i) => `b${10 + i}`))
    const c = await consumer()
    await c.subscribe({ topic, fromBeginning: true })
    const batches = []
    await c.run({
      eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
        batches.push({
          topic: batch.topic,
          partition: batch.partition,
          highWatermark: batch.highWatermark,
          firstOffset: batch.firstOffset(),
          lastOffset: batch.lastOffset(),
          values: batch.messages.map(m => m.value.toString()),
          offsets: batch.messages.map(m => m.offset),
        })
        for (const m of batch.messages) resolveOffset(m.offset)
        await heartbeat()
      },
    })
    await waitFor(() => batches.flatMap(b => b.values).length >= 15, { what: '15 messages in batches' })
    await disconnect(c)
    assert.deepEqual(
      batches.flatMap(b => b.values),
      Array.from({ length: 15 }, (_, i) => `b${i}`)
    )
    assert.deepEqual(
      batches.flatMap(b => b.offsets),
      Array.from({ length: 15 }, (_, i) => String(i))
    )
    for (const b of batches) {
      assert.equal(b.topic, topic)
      assert.equal(b.partition, 0)
      assert.equal(b.highWatermark, '15')
      assert.equal(b.firstOffset, b.offsets[0])
      assert.equal(b.lastOffset, b.offsets[b.offsets.length - 1])
    }
    assert.equal(batches[0].firstOffset, '0')
  })

  it('fromBeginning true reads old messages, fromBeginning false only new ones', async () => {
    const topic = unique('from-beginning')
    await produceValues(topic, ['old0', 'old1', 'old2'])

    const early = await consumeAll(kafka, topic, 3)
    assert.deepEqual(early.map(m => m.value.toString()), ['old0', 'old1', 'old2'])

    const c = await consumer()
    await c.subscribe({ topic, fromBeginning: false })
    const got = []
    await c.run({ eachMessage: async ({ message }) => void got.push(message) })
    // Until the consumer has resolved "latest", a new message may land before it: keep producing
    // new ones until one arrives. No old one may ever arrive.
    let n = 0
    await waitFor(
      async () => {
        if (got.length > 0) return true
        await produceValues(topic, [`new${n++}`])
        return false
      },
      { intervalMs: 250, what: 'a new message' }
    )
    await sleep(300)
    await disconnect(c)
    const values = got.map(m => m.value.toString())
    assert.ok(values.length >= 1)
    assert.ok(values.every(v => v.startsWith('new')), `only new messages: ${values}`)
    assert.ok(got.every(m => Number(m.offset) >= 3))
    // Consecutive: whatever new message it started from, it missed none after it.
    const first = Number(values[0].slice(3))
    assert.deepEqual(values, Array.from({ length: values.length }, (_, i) => `new${first + i}`))
  })

  it('seek moves the position forwards and backwards', async () => {
    const topic = unique('seek')
    await produceValues(topic, Array.from({ length: 10 }, (_, i) => `s${i}`))
    const c = await consumer()
    await c.subscribe({ topic, fromBeginning: true })
    const offsets = []
    let seekedBack = false
    await c.run({
      eachMessage: async ({ message }) => {
        offsets.push(message.offset)
        if (message.offset === '9' && !seekedBack) {
          seekedBack = true
          c.seek({ topic, partition: 0, offset: '5' })
        }
      },
    })
    c.seek({ topic, partition: 0, offset: '7' })
    await waitFor(() => offsets.length >= 8, { what: '8 messages' })
    await sleep(300)
    await disconnect(c)
    assert.deepEqual(offsets, ['7', '8', '9', '5', '6', '7', '8', '9'])
  })

  it('pause stops delivery and resume continues where it stopped', async () => {
    const topic = unique('pause')
    await produceValues(topic, ['p0', 'p1', 'p2'])
    const c = await consumer()
    await c.subscribe({ topic, fromBeginning: true })
    const values = []
    await c.run({
      eachMessage: async ({ message }) => {
        values.push(message.value.toString())
        if (values.length === 1) c.pause([{ topic }])
      },
    })
    await waitFor(() => values.length >= 1, { what: 'the first message' })
    assert.deepEqual(c.paused(), [{ topic, partitions: [0] }])
    await produceValues(topic, ['p3', 'p4'])
    await sleep(1500)
    assert.deepEqual(values, ['p0'], 'nothing is delivered while paused')
    c.resume([{ topic }])
    assert.deepEqual(c.paused(), [])
    await waitFor(() => values.length >= 5, { what: 'the rest after resume' })
    await sleep(300)
    await disconnect(c)
    assert.deepEqual(values, ['p0', 'p1', 'p2', 'p3', 'p4'])
  })

  it('commitOffsets commits an explicit offset that a new member of the group starts from', async () => {
    const topic = unique('commit')
    const groupId = unique('commit-group')
    await produceValues(topic, ['c0', 'c1', 'c2', 'c3', 'c4'])
    const first = await consumer({ groupId })
    await first.subscribe({ topic, fromBeginning: true })
    const seen = []
    await first.run({ autoCommit: false, eachMessage: async ({ message }) => void seen.push(message.offset) })
    await waitFor(() => seen.length >= 5, { what: '5 messages' })
    assert.deepEqual(seen, ['0', '1', '2', '3', '4'])
    const before = await admin.fetchOffsets({ groupId, topics: [topic] })
    assert.deepEqual(before, [{ topic, partitions: [{ partition: 0, offset: '-1', metadata: null }] }])

    await first.commitOffsets([{ topic, partition: 0, offset: '3' }])
    const after = await admin.fetchOffsets({ groupId, topics: [topic] })
    assert.deepEqual(after, [{ topic, partitions: [{ partition: 0, offset: '3', metadata: null }] }])
    await disconnect(first)

    const second = await consumer({ groupId })
    await second.subscribe({ topic, fromBeginning: true })
    const resumed = []
    await second.run({ eachMessage: async ({ message }) => void resumed.push(message.value.toString()) })
    await waitFor(() => resumed.length >= 2, { what: 'the uncommitted messages' })
    await sleep(300)
    await disconnect(second)
    assert.deepEqual(resumed, ['c3', 'c4'])
  })

  it('two consumers in a group split the partitions; the survivor takes over on disconnect', async () => {
    const topic = unique('group')
    const groupId = unique('split')
    await admin.createTopics({ topics: [{ topic, numPartitions: 4 }], waitForLeaders: true })

    const members = ['A', 'B'].map(name => ({ name, assignment: null, joins: 0, received: [] }))
    const [a, b] = await Promise.all(members.map(() => consumer({ groupId })))
    const clients = [a, b]
    for (const [i, c] of clients.entries()) {
      const member = members[i]
      c.on(c.events.GROUP_JOIN, ({ payload }) => {
        member.assignment = (payload.memberAssignment[topic] ?? []).slice().sort()
        member.joins += 1
      })
      await c.subscribe({ topic, fromBeginning: true })
    }
    await a.run({ eachMessage: async ({ partition, message }) => void members[0].received.push([partition, message.value.toString()]) })
    await waitFor(() => members[0].assignment?.length === 4, { what: 'A alone to own all 4 partitions' })
    await b.run({ eachMessage: async ({ partition, message }) => void members[1].received.push([partition, message.value.toString()]) })
    await waitFor(
      () => {
        const [x, y] = members.map(m => m.assignment ?? [])
        return x.length > 0 && y.length > 0 && x.length + y.length === 4 && new Set([...x, ...y]).size === 4
      },
      { timeoutMs: 20000, what: 'A and B to split the 4 partitions' }
    )
    const [ownedA, ownedB] = members.map(m => m.assignment)
    assert.deepEqual([...ownedA, ...ownedB].sort(), [0, 1, 2, 3])
    assert.equal(ownedA.length, 2, 'round robin gives each member two partitions')

    const phase1 = []
    for (let i = 0; i < 10; i++) for (let p = 0; p < 4; p++) phase1.push({ partition: p, value: `one-p${p}-${i}` })
    await producer.send({ topic, messages: phase1 })
    await waitFor(() => members[0].received.length + members[1].received.length >= 40, { what: '40 messages in the group' })
    await sleep(300)
    const [gotA, gotB] = members.map(m => m.received.map(([, v]) => v))
    assert.equal(gotA.length + gotB.length, 40, 'every message exactly once')
    assert.deepEqual([...gotA, ...gotB].sort(), phase1.map(m => m.value).sort())
    assert.ok(gotA.every(v => !gotB.includes(v)), 'no overlap')
    assert.ok(members[0].received.every(([p]) => ownedA.includes(p)))
    assert.ok(members[1].received.every(([p]) => ownedB.includes(p)))

    const joinsBefore = members[0].joins
    await disconnect(b)
    await waitFor(() => members[0].joins > joinsBefore && members[0].assignment.length === 4, {
      timeoutMs: 20000,
      what: 'A to take over all 4 partitions',
    })
    assert.deepEqual(members[0].assignment, [0, 1, 2, 3])

    const phase2 = []
    for (let i = 0; i < 5; i++) for (let p = 0; p < 4; p++) phase2.push({ partition: p, value: `two-p${p}-${i}` })
    await producer.send({ topic, messages: phase2 })
    await waitFor(() => members[0].received.filter(([, v]) => v.startsWith('two')).length >= 20, {
      what: 'A to receive phase 2 on every partition',
    })
    await sleep(300)
    const secondRound = members[0].received.filter(([, v]) => v.startsWith('two'))
    assert.deepEqual(secondRound.map(([, v]) => v).sort(), phase2.map(m => m.value).sort())
    assert.deepEqual([...new Set(secondRound.map(([p]) => p))].sort(), [0, 1, 2, 3])
    // B committed what it consumed when it left: A did not re-read B's phase 1 messages.
    assert.equal(members[0].received.filter(([, v]) => v.startsWith('one')).length, gotA.length)
    assert.equal((await admin.describeGroups([groupId])).groups[0].members.length, 1)
  })

  it('KafkaJS has no cooperative protocol: its eager group gives everything up and rejoins, records read once', async () => {
    // KafkaJS 2.2.4 ships only the RoundRobinAssigner and revokes every partition at each rebalance
    // (no KIP-429), so this is the eager counterpart of the confluent-kafka incremental test: the
    // coordinator that runs the cooperative follow-up rounds still runs a plain two-member rebalance.
    const topic = unique('eager')
    const groupId = unique('eager')
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true })
    const members = ['A', 'B'].map(name => ({ name, assignments: [], received: [] }))
    const start = async (member, c) => {
      c.on(c.events.GROUP_JOIN, ({ payload }) => {
        assert.equal(payload.groupProtocol, 'RoundRobinAssigner')
        member.assignments.push((payload.memberAssignment[topic] ?? []).slice().sort())
      })
      await c.subscribe({ topic, fromBeginning: true })
      await c.run({ eachMessage: async ({ partition, message }) => void member.received.push([partition, message.value.toString()]) })
    }
    const last = m => m.assignments[m.assignments.length - 1] ?? []
    const values = (tag, n) => {
      const out = []
      for (let i = 0; i < n; i++) for (let p = 0; p < 2; p++) out.push({ partition: p, value: `${tag}-p${p}-${i}` })
      return out
    }

    const a = await consumer({ groupId })
    await start(members[0], a)
    const before = values('before', 10)
    await producer.send({ topic, messages: before })
    await waitFor(() => last(members[0]).length === 2 && members[0].received.length >= 20, { what: 'A to own both and read 20' })

    const b = await consumer({ groupId })
    await start(members[1], b)
    await waitFor(() => last(members[0]).length === 1 && last(members[1]).length === 1, {
      timeoutMs: 20000,
      what: 'A and B to own one partition each',
    })
    assert.deepEqual([...last(members[0]), ...last(members[1])].sort(), [0, 1])
    assert.deepEqual(members[0].assignments[0], [0, 1])
    assert.equal((await admin.describeGroups([groupId])).groups[0].members.length, 2)

    const after = values('after', 10)
    await producer.send({ topic, messages: after })
    await waitFor(() => members[0].received.length + members[1].received.length >= 40, { what: '40 records in the group' })
    await sleep(300)
    const got = members.flatMap(m => m.received.map(([, v]) => v)).sort()
    assert.deepEqual(got, [...before, ...after].map(m => m.value).sort(), 'every record exactly once across the rebalance')
    assert.ok(members[1].received.every(([p, v]) => last(members[1]).includes(p) && v.startsWith('after')))

    await disconnect(b)
    await waitFor(() => last(members[0]).length === 2, { timeoutMs: 20000, what: 'A to take both back' })
    await disconnect(a)
  })

  it('preserves per-key order across a multi-partition topic', async () => {
    const topic = unique('order')
    await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true })
    const keys = ['alpha', 'beta', 'gamma', 'delta', 'epsilon']
    let seq = 0
    for (let round = 0; round < 10; round++) {
      const messages = []
      for (let j = 0; j < 3; j++) for (const key of keys) messages.push({ key, value: `${key}:${seq + j}` })
      seq += 3
      await producer.send({ topic, messages })
    }
    const got = await consumeAll(kafka, topic, keys.length * 30)
    assert.equal(got.length, keys.length * 30)
    const partitions = new Set()
    for (const key of keys) {
      const mine = got.filter(m => m.key.toString() === key)
      assert.deepEqual(
        mine.map(m => m.value.toString()),
        Array.from({ length: 30 }, (_, i) => `${key}:${i}`),
        `order of ${key}`
      )
      const used = new Set(mine.map(m => m.partition))
      assert.equal(used.size, 1, `${key} lives in one partition`)
      partitions.add([...used][0])
    }
    assert.ok(partitions.size > 1, 'the keys are spread over partitions')
  })
})
