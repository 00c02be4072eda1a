// Package failure is the data source's one error map. Classify names what
// went wrong (a Kind), and the Kind's row of the table says who must act
// (the SDK's error source: downstream for the user's input and for the
// systems we query, plugin for our own bugs) and how each boundary
// answers: the status of a query's error response (DataResponse), the
// HTTP status of a resource route, and the error source Save & test and
// the resource routes record for the SDK's logs and metrics.
//
// It sits below the packages that answer Grafana (query, health,
// resources, plugin) and above those whose errors it reads (prom,
// models, interval), so every boundary can use it without an import
// cycle; prom's own error kinds are rows of the table, not a second map.
package failure
