"""Studies: sweeps with an analysis and a report of their own (`itb study …`, `itb profile
calibrate`). Each study is one subpackage, found by the registry (`itb.study.registry`);
the modules here are what they share: the registry, the arguments' base (`args`), the
options' parsers (`options`), the BU studies' (`bulk`) and the profile studies' (`pursuit`)
common pieces."""
