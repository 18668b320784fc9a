// Package domain owns palace's model: the vocabulary of cards and evidence
// as typed values with their valid sets, and the records built from them
// (Card, Evidence, Link, Event, Scope, Trigger, RoleCounts). It imports
// nothing of palace's, so every layer speaks the same types.
package domain
