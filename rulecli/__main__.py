from rulecli.cli.app import main

main()
