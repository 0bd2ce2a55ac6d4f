'use strict';
// Ancha's vendor hostnames for Node agents (agent.hostnames: real), loaded with --require
// through NODE_OPTIONS. Node 24 and later use HTTPS_PROXY themselves (NODE_USE_ENV_PROXY=1);
// Node before 24 ignores proxy variables in fetch and in its https module. So a TLS
// connection to a vendor's hostname (ANCHA_HOSTNAMES) on port 443 goes to Ancha's TLS port
// (ANCHA_HOSTNAMES_TLS) instead, still asking for the vendor's name (SNI), where Ancha
// intercepts it as its proxy would. fetch (undici), https, and every client built on them
// connect through tls.connect, so all of them are covered; nothing else is touched.
const hosts = new Set((process.env.ANCHA_HOSTNAMES || '').toLowerCase().split(',').filter(Boolean));
const target = process.env.ANCHA_HOSTNAMES_TLS || '';
const colon = target.lastIndexOf(':');
if (hosts.size > 0 && colon > 0) {
  const address = target.slice(0, colon).replace(/^\[|\]$/g, '');
  const port = Number(target.slice(colon + 1));
  const tls = require('node:tls');
  const connect = tls.connect;
  tls.connect = function ancha_connect(...args) {
    let options;
    let rest;
    if (args[0] !== null && typeof args[0] === 'object') {
      options = { ...args[0] };
      rest = args.slice(1);
    } else {
      options = { port: args[0] };
      rest = args.slice(1);
      if (typeof rest[0] === 'string') options.host = rest.shift();
      if (rest[0] !== null && typeof rest[0] === 'object') options = { ...rest.shift(), ...options };
    }
    const name = String(options.host || options.servername || '').toLowerCase().replace(/\.$/, '');
    if (!options.socket && hosts.has(name) && Number(options.port || 443) === 443) {
      options = { ...options, host: address, port, servername: options.servername || name };
    }
    return connect.call(this, options, ...rest);
  };
}
