module bothy.example.com/examples/agents/echo

go 1.26.0

require github.com/coder/websocket v1.8.15
