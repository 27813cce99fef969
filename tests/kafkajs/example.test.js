'use strict'
// The Node example of docs/testing.md as a user writes it: start trafka in memory with startTrafka, then
// produce and consume with KafkaJS.
const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { Kafka, logLevel } = require('kafkajs')
const { startTrafka } = require('./trafka')
const { consumeAll } = require('./helpers')

describe('startTrafka (the docs/testing.md example)', () => {
  let trafka
  before(async () => {
    trafka = await startTrafka({ python: process.env.TRAFKA_PYTHON || 'python3' })
  })
  after(() => trafka.process.kill('SIGTERM'))

  it('gives a bootstrap address KafkaJS produces to and consumes from', async () => {
    assert.match(trafka.bootstrapServers, /^127\.0\.0\.1:\d+$/)
    const kafka = new Kafka({ brokers: [trafka.bootstrapServers], logLevel: logLevel.NOTHING })
    const producer = kafka.producer()
    await producer.connect()
    await producer.send({ topic: 'readme-example', messages: [{ key: 'k', value: 'hello' }] })
    await producer.disconnect()
    const [message] = await consumeAll(kafka, 'readme-example', 1)
    assert.equal(message.key.toString(), 'k')
    assert.equal(message.value.toString(), 'hello')
  })

  it('fails with one line naming the command and the reason when the broker cannot start', async () => {
    await assert.rejects(
      startTrafka({ python: process.env.TRAFKA_PYTHON || 'python3', args: ['--memory', '--no-such-flag'] }),
      err => /^trafka did not start: `\S*python\S* -m trafka serve .*--no-such-flag`: .*unrecognized arguments/.test(err.message)
        && !err.message.includes('\n'),
    )
  })
})
