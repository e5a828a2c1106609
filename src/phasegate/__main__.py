from phasegate.sdk.cli import main

main()
