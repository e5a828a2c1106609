from phasegate._cli.app import main

main()
