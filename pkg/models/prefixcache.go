package models

// QueryPrefixCache answers the prefix cache per grouping over time: the
// local and external (KV-connector) hit rates and the prompt tokens per
// second by where they came from (computed, local cache, KV transfer).
// It takes the common groupings (none, model, instance, instance_engine)
// and no options of its own.
const QueryPrefixCache QueryType = "prefixCache"

// PrefixCacheOptions are the prefixCache type's own options: none.
type PrefixCacheOptions struct{}
