"""A Firestore simulator for the night's tests and benchmarks (firestore_sim.py), held to Google's
emulator by test_agreement.py."""
