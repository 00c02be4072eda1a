// Command querytypes writes the table of query types (pkg/models
// QuerySchema) as JSON for the editor, src/queryTypes.json:
//
//	go generate ./pkg/models/
//	go run ./cmd/querytypes -o src/queryTypes.json
//
// pkg/models' TestQueryTypesJSON fails while the committed file differs.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

func main() {
	out := flag.String("o", "src/queryTypes.json", "file to write")
	flag.Parse()
	js, err := models.SchemaJSON(Bounds)
	if err == nil {
		err = os.WriteFile(*out, js, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "querytypes:", err)
		os.Exit(1)
	}
}

// Bounds are vLLM's default bucket bounds of an slo family.
func Bounds(family string) []float64 { return vllm.LatencyBuckets[vllm.SLOFamilies[family]] }
