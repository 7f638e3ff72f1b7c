module bothy.example.com/examples/agents/echo

go 1.26.0

toolchain go1.26.11

require github.com/coder/websocket v1.8.15
