'use strict'
// Run before the suite (`npm test`): a broker that cannot start fails the run with one line saying
// why, instead of every test being reported as cancelled.
const { startTrafka } = require('./trafka')

startTrafka({ python: process.env.TRAFKA_PYTHON || 'python3' })
  .then(({ process: child }) => child.kill('SIGTERM'))
  .catch(err => {
    console.error(err.message)
    process.exit(1)
  })
