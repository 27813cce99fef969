'use strict'
// KafkaJS 2.2.4 over SASL_SSL with SCRAM: certificates made at run time (Python's trustme), users added
// with `trafka user add`, ACLs enforced by the broker's authorizer.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { Kafka, logLevel } = require('kafkajs')
const { startTrafka } = require('./trafka')
const { unique, consumeAll } = require('./helpers')

const python = process.env.TRAFKA_PYTHON || 'python3'
const { TRAFKA_PYTHON, ...inherited } = process.env
const env = { ...inherited, TRAFKA_GROUPS_INITIAL_REBALANCE_DELAY_MS: '0', TRAFKA_LOG_LEVEL: 'WARNING' }

function run(args, input) {
  const done = spawnSync(python, args, { input, env, encoding: 'utf8' })
  if (done.status !== 0) throw new Error(`${python} ${args.join(' ')}: ${done.stderr}`)
  return done.stdout
}

function makeCertificates(dir) {
  run(['-c', `
import sys, trustme
ca = trustme.CA()
ca.cert_pem.write_to_path(sys.argv[1] + "/ca.pem")
ca.issue_cert("localhost", "127.0.0.1").private_key_and_cert_chain_pem.write_to_path(sys.argv[1] + "/broker.pem")
`, dir])
}

describe('KafkaJS over SASL_SSL with SCRAM', () => {
  let dir, broker, listener, ca

  function kafka(mechanism, username, password) {
    return new Kafka({
      clientId: 'trafka-kafkajs-security',
      brokers: [`127.0.0.1:${listener.port}`],
      ssl: { ca: [ca] },
      sasl: { mechanism, username, password },
      logLevel: logLevel.NOTHING,
      connectionTimeout: 3000,
      requestTimeout: 10000,
      retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 500 },
    })
  }

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trafka-kafkajs-tls-'))
    makeCertificates(dir)
    ca = fs.readFileSync(path.join(dir, 'ca.pem'))
    const dataDir = path.join(dir, 'logs')
    run(['-m', 'trafka', 'user', 'add', 'alice', '--mechanism', 'SCRAM-SHA-256', '--data-dir', dataDir], 'alice-secret\n')
    run(['-m', 'trafka', 'user', 'add', 'bob', '--mechanism', 'SCRAM-SHA-512', '--data-dir', dataDir], 'bob-secret\n')
    const config = path.join(dir, 'trafka.toml')
    fs.writeFileSync(config, `
[server]
listeners = "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0"

[security]
sasl_enabled_mechanisms = "SCRAM-SHA-256,SCRAM-SHA-512"
ssl_keystore_type = "PEM"
ssl_keystore_location = "${path.join(dir, 'broker.pem')}"
authorizer_class_name = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
super_users = "User:alice"
`)
    broker = await startTrafka({ python, env, args: ['--data-dir', dataDir, '--config', config] })
    listener = broker.listeners.SASL_SSL
  })

  after(async () => {
    if (broker?.process && broker.process.exitCode === null) {
      const exited = new Promise(resolve => broker.process.once('exit', code => resolve(code)))
      broker.process.kill('SIGTERM')
      assert.equal(await exited, 0, broker.stderr())
    }
    if (dir) fs.rmSync(dir, { recursive: true, force: true })
  })

  it('produces, consumes in a group and administers as a SCRAM-SHA-256 user', async () => {
    const client = kafka('scram-sha-256', 'alice', 'alice-secret')
    const topic = unique('secure')
    const admin = client.admin()
    await admin.connect()
    try {
      assert.equal(await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] }), true)
      const metadata = await admin.fetchTopicMetadata({ topics: [topic] })
      assert.equal(metadata.topics[0].partitions.length, 2)
      const cluster = await admin.describeCluster()
      assert.deepEqual(cluster.brokers.map(b => `${b.host}:${b.port}`), [listener.advertised])
    } finally {
      await admin.disconnect()
    }
    const producer = client.producer()
    await producer.connect()
    try {
      await producer.send({ topic, messages: Array.from({ length: 6 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })) })
    } finally {
      await producer.disconnect()
    }
    const messages = await consumeAll(client, topic, 6)
    assert.deepEqual(messages.map(m => m.value.toString()).sort(), ['v0', 'v1', 'v2', 'v3', 'v4', 'v5'])
  })

  it('refuses a wrong password with Kafka\'s authentication error', async () => {
    const admin = kafka('scram-sha-256', 'alice', 'wrong').admin()
    await assert.rejects(admin.connect(), err => {
      assert.equal(err.name, 'KafkaJSSASLAuthenticationError')
      assert.match(err.message, /SASL SCRAM SHA256 authentication failed/)
      return true
    })
  })

  it('denies a SCRAM-SHA-512 user without ACLs what the authorizer does not allow', async () => {
    const producer = kafka('scram-sha-512', 'bob', 'bob-secret').producer()
    await producer.connect()
    try {
      await assert.rejects(
        producer.send({ topic: unique('not-bobs'), messages: [{ value: 'x' }] }),
        err => /authoriz/i.test(`${err.message} ${err.type} ${err.cause?.type}`),
      )
    } finally {
      await producer.disconnect()
    }
  })
})
