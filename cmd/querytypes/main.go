// Command querytypes writes the table of query types (pkg/models
// QuerySchema) for the editor: as JSON, src/queryTypes.json (the rules:
// groupings, options, defaults, limits), and as TypeScript,
// src/queryTypes.gen.ts (the VllmQueryType union, the list of types and
// their wording in the type picker):
//
//	go generate ./pkg/models/
//	go run ./cmd/querytypes -o src/queryTypes.json -ts src/queryTypes.gen.ts
//
// It lives outside pkg/models because it also reads pkg/vllm (vLLM's
// default SLO bucket bounds), which imports pkg/models. pkg/models'
// TestQueryTypesJSON and TestQueryTypesTS fail while a committed file
// differs from what this writes.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

func main() {
	out := flag.String("o", "src/queryTypes.json", "JSON file to write")
	ts := flag.String("ts", "src/queryTypes.gen.ts", "TypeScript file to write")
	flag.Parse()
	if err := run(*out, *ts); err != nil {
		fmt.Fprintln(os.Stderr, "querytypes:", err)
		os.Exit(1)
	}
}

func run(jsonFile, tsFile string) error {
	js, err := models.SchemaJSON(Bounds)
	if err != nil {
		return err
	}
	src, err := models.SchemaTS()
	if err != nil {
		return err
	}
	if err := os.WriteFile(jsonFile, js, 0o644); err != nil {
		return err
	}
	return os.WriteFile(tsFile, src, 0o644)
}

// Bounds are vLLM's default bucket bounds of an slo family.
func Bounds(family string) []float64 { return vllm.LatencyBuckets[vllm.SLOFamilies[family]] }
