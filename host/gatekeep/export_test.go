package gatekeep

// ResearchFloor is researchFloor, for the external tests.
var ResearchFloor = researchFloor
