package live_test

import (
	"fmt"
	"time"

	"github.com/inferops/vllm-datasource/pkg/live"
)

// A live queue per engine of one model, pushed every 5 seconds: the path
// the browser subscribes to (ds/<uid>/<path>) and what the backend reads.
func ExampleParseChannel() {
	path := "queue/" + live.EncodeOptions([]byte(`{"grouping":"instance_engine","models":["m"],"every":"5s"}`))
	c, err := live.ParseChannel(path, nil, time.Second)
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Kind, c.Every, string(c.Query))

	_, err = live.ParseChannel("queue/"+live.EncodeOptions([]byte(`{"every":"200ms"}`)), nil, time.Second)
	fmt.Println(err)
	// Output:
	// queue 5s {"grouping":"instance_engine","models":["m"],"queryType":"queue"}
	// live channel refused: path "queue/eyJldmVyeSI6IjIwMG1zIn0": every 200ms is below 1s, the shortest live interval
}
