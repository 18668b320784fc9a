# Team gate: replaces palace.gate whole. It starts as the embedded default
# (importable as data.palace.default.gate); change decision to add your rules,
# e.g. deny with your own reason when your condition holds.
package palace.gate

import rego.v1

import data.palace.default.gate as base

decision := base.decision
