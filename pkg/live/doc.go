// Package live serves the data source's Grafana Live channels
// (ds/<uid>/<path>): a live queue and a live fleet table, pushed every
// scrape interval instead of polled.
//
// A channel's path names its kind and carries the query's options
// (ParseChannel: "<kind>/<base64url of the query JSON>", or that text's
// SHA-256 with the options in the subscription's data when the channel
// would pass Grafana's 160 characters), validated as any
// query is (pkg/models); each tick runs the kind's ordinary handler
// through a Querier (pkg/query's Executor) and pushes the one frame
// pkg/frames makes of its answer. A Hub runs one loop per channel however
// many streams subscribe to it and stops it when the last one leaves, so
// a channel costs one query per tick.
package live
