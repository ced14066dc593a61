#!/bin/bash
# gen-stubs.sh OUTDIR: Python gRPC stubs (api_pb2.py, api_pb2_grpc.py) for CRI runtime.v1
# from the api.proto next to this script (kubernetes/cri-api, Apache-2.0), or $CRI_API_PROTO.
# Needs protoc + grpc_python_plugin (Debian: protobuf-compiler, protobuf-compiler-grpc).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
proto=${CRI_API_PROTO:-$here/api.proto}
out=${1:?usage: gen-stubs.sh OUTDIR}
mkdir -p "$out"
# A private copy: cri-api <= v0.33 imports gogo.proto (Go-only file options: dropped); cri-api
# >= v0.34 marks secrets [debug_redact = true], which protoc < 22 (Debian 12: 3.21) rejects
# as an unknown option. Neither changes the wire format.
sed -E -e '/^import "github.com\/gogo\//d' -e '/^option \(gogoproto\./d' \
       -e 's/ *\[debug_redact *= *true\]//' "$proto" >"$out/api.proto"
protoc -I"$out" --python_out="$out" --grpc_out="$out" \
       --plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin "$out/api.proto"
