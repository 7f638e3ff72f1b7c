module bothy.example.com/architecture

go 1.26.0

toolchain go1.26.11

require go.yaml.in/yaml/v3 v3.0.6
