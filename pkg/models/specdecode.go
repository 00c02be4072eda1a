package models

// QuerySpecDecode is speculative decoding's acceptance per grouping.
const QuerySpecDecode QueryType = "specDecode"

// SpecDecodeOptions are the specDecode type's own options: none.
type SpecDecodeOptions struct{}
