'use strict'
// Start and stop a real `trafka serve` process for one test file, and small bounded-wait helpers.
//
// The broker is started by `startTrafka` (./trafka.js, the Node example in docs/testing.md) with a data dir of its
// own. The python that runs it is $TRAFKA_PYTHON, else `python3` (the README's test command runs
// inside the activated venv, where `python3 -m trafka` is the installed broker).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const crypto = require('node:crypto')
const { Kafka, logLevel } = require('kafkajs')
const { startTrafka } = require('./trafka')

class Broker {
  constructor({ env = {}, startTimeoutMs = 30000 } = {}) {
    this.env = env
    this.startTimeoutMs = startTimeoutMs
    this.stderr = () => ''
    this.process = null
    this.port = 0
    this.dataDir = null
  }

  get bootstrap() {
    return `127.0.0.1:${this.port}`
  }

  log() {
    return this.stderr()
  }

  async start() {
    this.dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'trafka-kafkajs-'))
    const python = process.env.TRAFKA_PYTHON || 'python3'
    // The broker refuses unknown TRAFKA_* variables, and TRAFKA_PYTHON is ours, not its.
    const { TRAFKA_PYTHON, ...inherited } = process.env
    const env = { ...inherited, TRAFKA_GROUPS_INITIAL_REBALANCE_DELAY_MS: '0', TRAFKA_LOG_LEVEL: 'WARNING', ...this.env }
    try {
      const started = await startTrafka({ python, env, args: ['--data-dir', this.dataDir], timeoutMs: this.startTimeoutMs })
      this.process = started.process
      this.port = started.port
      this.stderr = started.stderr
    } catch (err) {
      fs.rmSync(this.dataDir, { recursive: true, force: true })
      throw err
    }
    this.exited = new Promise(resolve => {
      if (this.process.exitCode !== null) resolve({ code: this.process.exitCode, signal: this.process.signalCode })
      else this.process.once('exit', (code, signal) => resolve({ code, signal }))
    })
    return this
  }

  /** SIGTERM, then the exit status (SIGKILL and an error after timeoutMs). */
  async stop(timeoutMs = 20000) {
    if (this.process.exitCode === null && this.process.signalCode === null) {
      this.process.kill('SIGTERM')
    }
    let timer
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => {
        this.process.kill('SIGKILL')
        reject(new Error(`trafka did not stop within ${timeoutMs} ms:\n${this.log()}`))
      }, timeoutMs)
    })
    try {
      const { code } = await Promise.race([this.exited, timeout])
      return code
    } finally {
      clearTimeout(timer)
      fs.rmSync(this.dataDir, { recursive: true, force: true })
    }
  }
}

function kafkaFor(broker, clientId = 'trafka-kafkajs') {
  return new Kafka({
    clientId,
    brokers: [broker.bootstrap],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3000,
    requestTimeout: 10000,
    retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1000 },
  })
}

function unique(prefix) {
  return `${prefix}-${crypto.randomBytes(4).toString('hex')}`
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

/** Poll `predicate` (sync or async) until truthy; throw after timeoutMs. */
async function waitFor(predicate, { timeoutMs = 15000, intervalMs = 50, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await predicate()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(intervalMs)
  }
}

/** Reject if `promise` does not settle within ms. */
async function within(ms, promise, what = 'operation') {
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/** Run an eachMessage consumer of `topic` (from its beginning by default) until `count` messages arrived. */
async function consumeAll(kafka, topic, count, { groupId = unique('g'), timeoutMs = 15000, fromBeginning = true } = {}) {
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 200 })
  const messages = []
  await consumer.connect()
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning })
    await consumer.run({
      eachMessage: async ({ topic: t, partition, message }) => {
        messages.push({ topic: t, partition, ...message })
      },
    })
    await waitFor(() => messages.length >= count, { timeoutMs, what: `${count} messages from ${topic}` })
  } finally {
    await consumer.disconnect()
  }
  return messages
}

module.exports = { Broker, kafkaFor, unique, sleep, waitFor, within, consumeAll }

// --- Below KafkaJS: a raw ApiVersions v0 round trip, and the record batch headers of a segment. ---

const net = require('node:net')

/** The broker's advertised APIs as Map(apiKey -> {min, max}), by an ApiVersions v0 request. */
function apiVersions(broker, timeoutMs = 5000) {
  const clientId = Buffer.from('trafka-kafkajs-probe')
  const body = Buffer.alloc(2 + 2 + 4 + 2 + clientId.length)
  body.writeInt16BE(18, 0) // ApiVersions
  body.writeInt16BE(0, 2) // v0
  body.writeInt32BE(7, 4) // correlation id
  body.writeInt16BE(clientId.length, 8)
  clientId.copy(body, 10)
  const frame = Buffer.alloc(4)
  frame.writeInt32BE(body.length, 0)
  return new Promise((resolve, reject) => {
    const socket = net.connect(broker.port, '127.0.0.1')
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error('ApiVersions timed out'))
    }, timeoutMs)
    let received = Buffer.alloc(0)
    socket.on('connect', () => socket.write(Buffer.concat([frame, body])))
    socket.on('error', err => {
      clearTimeout(timer)
      reject(err)
    })
    socket.on('data', chunk => {
      received = Buffer.concat([received, chunk])
      if (received.length < 4 || received.length < 4 + received.readInt32BE(0)) return
      clearTimeout(timer)
      socket.end()
      const correlationId = received.readInt32BE(4)
      const errorCode = received.readInt16BE(8)
      if (correlationId !== 7 || errorCode !== 0) {
        reject(new Error(`ApiVersions answered correlation ${correlationId}, error ${errorCode}`))
        return
      }
      const count = received.readInt32BE(10)
      const apis = new Map()
      for (let i = 0, at = 14; i < count; i++, at += 6) {
        apis.set(received.readInt16BE(at), { min: received.readInt16BE(at + 2), max: received.readInt16BE(at + 4) })
      }
      resolve(apis)
    })
  })
}

/** Headers of the v2 record batches in `<dataDir>/<topic>-<partition>/*.log`, in file order. */
function segmentBatches(broker, topic, partition = 0) {
  const dir = path.join(broker.dataDir, `${topic}-${partition}`)
  const batches = []
  for (const name of fs.readdirSync(dir).filter(n => n.endsWith('.log')).sort()) {
    const data = fs.readFileSync(path.join(dir, name))
    for (let at = 0; at + 61 <= data.length; ) {
      const batchLength = data.readInt32BE(at + 8)
      batches.push({
        baseOffset: Number(data.readBigInt64BE(at)),
        magic: data.readInt8(at + 16),
        compression: data.readInt16BE(at + 21) & 0x7, // 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd
        isTransactional: (data.readInt16BE(at + 21) & 0x10) !== 0,
        isControl: (data.readInt16BE(at + 21) & 0x20) !== 0,
        lastOffsetDelta: data.readInt32BE(at + 23),
        producerId: Number(data.readBigInt64BE(at + 43)),
        producerEpoch: data.readInt16BE(at + 51),
        baseSequence: data.readInt32BE(at + 53),
        recordCount: data.readInt32BE(at + 57),
      })
      at += 12 + batchLength
    }
  }
  return batches
}

module.exports.apiVersions = apiVersions
module.exports.segmentBatches = segmentBatches
