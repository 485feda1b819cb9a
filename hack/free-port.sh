#!/usr/bin/env bash
# Prints a TCP port that is free on 127.0.0.1 right now (the kernel picks it).
exec node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
