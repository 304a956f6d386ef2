"""The operator's and the tests' tools: the simulator, the soak, and the hidden-information audit."""
