// Package domain owns palace's model: the vocabulary of cards and evidence
// (tiers, statuses, roles, provenance, persistence, rendering preferences,
// lanes and render forms, anchor kinds, lifecycle actions, adoption signals,
// injection outcomes) as typed values with their valid sets and parsing, and
// the records built from them — Card, Evidence, Link, Event, Scope, Trigger
// and RoleCounts.
//
// It sits at the bottom of the module and imports nothing of palace's, so
// every layer (store, policies, host and the surfaces above host) can speak
// the same types without importing the layer that stores or judges them.
package domain
