'use strict'
// Start a trafka broker for a Node test run and learn its address (the Node example in docs/testing.md).
// `trafka serve --port 0 --ready-file F` writes {"bootstrap_servers": ...} to F once it listens (and
// "http": "host:port" with --http-port, where --testing serves the /testing/... controls).
const { spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

async function startTrafka({ python = 'python3', args = ['--memory'], env = process.env, timeoutMs = 30000 } = {}) {
  const readyFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'trafka-ready-')), 'ready.json')
  const command = [python, '-m', 'trafka', 'serve', '--host', '127.0.0.1', '--port', '0', '--ready-file', readyFile, ...args]
  const child = spawn(command[0], command.slice(1), { env, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  let failed = null
  child.stderr.on('data', chunk => { stderr += chunk })
  child.once('error', err => { failed = err.message })
  for (const deadline = Date.now() + timeoutMs; !fs.existsSync(readyFile);) {
    if (failed || child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL')
      const why = failed || stderr.trim().split('\n').pop() || `no ready file after ${timeoutMs} ms`
      throw new Error(`trafka did not start: \`${command.join(' ')}\`: ${why}`)
    }
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  const { bootstrap_servers: bootstrapServers, port, listeners, http } = JSON.parse(fs.readFileSync(readyFile, 'utf8'))
  return { bootstrapServers, port, listeners, http, process: child, stderr: () => stderr }
}

module.exports = { startTrafka }
