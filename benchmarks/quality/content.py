"""The facts, people and events planted in the benchmark conversations.

All of it is invented for this benchmark. Each entry pairs the way a person would say
something in a chat with the way someone would later ask about it. Some questions reuse the
statement's rare words (names, numbers, codes: keyword search's home ground); others ask in
different words than the statement used (paraphrase: where dense search should help).

Placeholders in statements and questions: ``{u}`` the user's first name, ``{p}`` a person's
first name, ``{rel}`` a relation word, and the slot names listed in each entry's ``slots``.
"""

from __future__ import annotations

import calendar

FEMALE_NAMES = [
    "Marta",
    "Ingrid",
    "Priya",
    "Leila",
    "Noor",
    "Paloma",
    "Rosa",
    "Vera",
    "Wanjiru",
    "Yara",
    "Beatriz",
    "Dalia",
    "Esme",
    "Greta",
    "Ilse",
    "Katya",
    "Mireille",
    "Oona",
    "Rhea",
    "Thandiwe",
    "Willa",
    "Ximena",
    "Zainab",
    "Anouk",
    "Cosima",
    "Elif",
    "Gwen",
    "Imani",
    "Lucia",
    "Nadia",
    "Orla",
    "Rania",
    "Tove",
    "Ulla",
    "Aiko",
    "Carys",
    "Flora",
    "Juno",
    "Lena",
    "Nell",
    "Petra",
    "Saoirse",
    "Uma",
    "Zeynep",
    "Amara",
]
MALE_NAMES = [
    "Tomasz",
    "Kofi",
    "Rafael",
    "Sven",
    "Yusuf",
    "Mateo",
    "Olek",
    "Quentin",
    "Sione",
    "Tariq",
    "Ugo",
    "Xavier",
    "Zoltan",
    "Caleb",
    "Fintan",
    "Hamid",
    "Joaquin",
    "Lorenzo",
    "Nikhil",
    "Pavel",
    "Soren",
    "Umberto",
    "Viggo",
    "Yosef",
    "Bruno",
    "Dario",
    "Femi",
    "Henrik",
    "Jonas",
    "Malik",
    "Piet",
    "Stellan",
    "Vikram",
    "Bastian",
    "Desmond",
    "Eero",
    "Gideon",
    "Ivo",
    "Kasper",
    "Milos",
    "Osman",
    "Ronan",
    "Teodor",
    "Valentin",
    "Yannick",
    "Boris",
]
SURNAMES = [
    "Okafor",
    "Lindqvist",
    "Ferreira",
    "Nakashima",
    "Brennan",
    "Kowalczyk",
    "Haddad",
    "Moreau",
    "Van der Berg",
    "Castellano",
    "Mensah",
    "Oyelaran",
    "Petrakis",
    "Szabo",
    "Albescu",
    "Rasmussen",
    "Delacroix",
    "Iwasaki",
    "Quiroga",
    "Thornbury",
    "Ekwueme",
    "Halvorsen",
    "Mancini",
    "Dubrovsky",
    "Achterberg",
    "Fitzgerald",
    "Soltani",
    "Bergström",
    "Ncube",
    "Yilmaz",
]
CITIES = [
    "Porto",
    "Ghent",
    "Tartu",
    "Bergen",
    "Valencia",
    "Krakow",
    "Lyon",
    "Leeds",
    "Graz",
    "Bologna",
    "Aarhus",
    "Cluj",
    "Tampere",
    "Bilbao",
    "Brno",
    "Malmo",
    "Utrecht",
    "Galway",
    "Trieste",
    "Ljubljana",
    "Plovdiv",
    "Nantes",
    "Seville",
    "Dresden",
    "Riga",
    "Cork",
    "Basel",
    "Turku",
    "Split",
    "Salzburg",
]
COMPANIES = [
    "Brightwave Logistics",
    "Kestrel Analytics",
    "Hollowtree Games",
    "Marlow & Finch",
    "Bluepeak Energy",
    "Quillon Health",
    "Northgate Robotics",
    "Tidewater Insurance",
    "Copperleaf Studios",
    "Ironbark Construction",
    "Lumen Ferry Lines",
    "Orchard Lane Publishing",
    "Vantablue Optics",
    "Greyhaven Consulting",
    "Saltmarsh Breweries",
    "Pinecrest Pharma",
]
PET_NAMES = [
    "Biscuit",
    "Pimenta",
    "Noodle",
    "Captain",
    "Mochi",
    "Waffles",
    "Juniper",
    "Pickle",
    "Ziggy",
    "Tofu",
    "Basil",
    "Clementine",
    "Gizmo",
    "Pepper",
    "Olive",
    "Bramble",
    "Sprout",
    "Marzipan",
    "Dumpling",
    "Pretzel",
    "Rooibos",
    "Figaro",
    "Nugget",
    "Paprika",
]
PETS = ["greyhound", "tabby cat", "parrot", "rabbit", "tortoise", "beagle", "ferret", "border collie"]
INSTRUMENTS = [
    "cello",
    "trombone",
    "banjo",
    "double bass",
    "accordion",
    "harp",
    "oboe",
    "ukulele",
    "tabla",
    "saxophone",
    "bagpipes",
    "theremin",
]
CARS = [
    "a 2012 Volvo estate",
    "a tiny red Fiat Panda",
    "an old Land Rover Defender",
    "a second-hand Nissan Leaf",
    "a white Skoda Octavia",
    "a vintage Citroen 2CV",
    "a Mazda MX-5",
    "a Toyota Hilux pickup",
    "a yellow VW camper van",
    "a battered Renault Kangoo",
]
ALLERGENS = ["peanuts", "shellfish", "sesame", "kiwi fruit", "penicillin", "hazelnuts", "mustard", "celery"]
FIELDS = [
    "marine biology",
    "medieval history",
    "structural engineering",
    "nursing",
    "architecture",
    "econometrics",
    "veterinary science",
    "linguistics",
    "glaciology",
    "urban planning",
]
SPORTS = ["rugby", "water polo", "fencing", "volleyball", "judo", "basketball", "hockey", "handball"]
STREETS = [
    "Elm Road",
    "Rua das Flores",
    "Kastanienallee",
    "Baker's Row",
    "Via Tortona",
    "Linden Street",
    "Harbour Lane",
    "Quarry Hill",
    "Sorrel Avenue",
    "Millbrook Close",
    "Wexford Terrace",
    "Calle Aurora",
    "Osprey Way",
    "Tannery Yard",
    "Juniper Crescent",
    "Vinegar Lane",
]
RESTAURANTS = [
    "Casa Lume",
    "The Gilded Turnip",
    "Osteria Ventoso",
    "Nordhavn Kitchen",
    "Little Saigon Social",
    "Brasserie Marigold",
    "Sakura Yokocho",
    "The Copper Kettle",
    "Mesa Verde",
    "Fennel & Flint",
]
LANGUAGES = [
    "Portuguese",
    "Japanese",
    "Finnish",
    "Greek",
    "Korean",
    "Turkish",
    "Dutch",
    "Swahili",
    "Polish",
    "Icelandic",
]
CODENAMES = [
    "Bluebottle",
    "Kingfisher",
    "Marmalade",
    "Nightjar",
    "Paper Lantern",
    "Quicksilver",
    "Tangerine",
    "Driftwood",
    "Saltlick",
    "Halibut",
]
BLOOD_TYPES = ["B negative", "AB negative", "A negative", "O negative", "AB positive"]
WIFI_WORDS = [
    "bluefinch",
    "mossylog",
    "pinecone",
    "otterden",
    "larkspur",
    "hearthstone",
    "quietbay",
    "fernhollow",
]
MONTH_NAMES = list(calendar.month_name)[1:]

# -- single facts --------------------------------------------------------------------------------
# slots are filled by generate.py (see its _slot function for each slot name).
SINGLE_FACTS: list[dict] = [
    {
        "key": "locker",
        "slots": ["code4"],
        "statements": [
            "The new locker code at the climbing gym is {code4}, writing it here so I don't forget.",
            "Note to self: climbing gym locker code changed to {code4}.",
        ],
        "questions": [
            "What is the locker code at {u}'s climbing gym?",
            "Which code opens {u}'s locker at the climbing gym?",
        ],
        "answer": "{code4}",
    },
    {
        "key": "flight",
        "slots": ["flightno", "city", "ordinal"],
        "statements": [
            "Booked it! Flight {flightno} to {city}, leaving on the {ordinal}.",
            "Got the tickets: {flightno}, direct to {city} on the {ordinal}, window seat secured.",
        ],
        "questions": ["What flight number did {u} book to {city}?", "Which flight is {u} taking to {city}?"],
        "answer": "{flightno}",
    },
    {
        "key": "plumber",
        "slots": ["fullname"],
        "statements": [
            "The plumber who fixed the boiler was {fullname}, really decent guy, didn't overcharge.",
            "Boiler's working again thanks to a plumber called {fullname}, keeping his number.",
        ],
        "questions": [
            "What was the name of the plumber who fixed {u}'s boiler?",
            "Who repaired the heating for {u}?",
        ],
        "answer": "{fullname}",
    },
    {
        "key": "doctor",
        "slots": ["surname", "street"],
        "statements": [
            "My new GP is Dr. {surname} at the {street} clinic, seems nice.",
            "Registered with a new GP today, Dr. {surname}, the practice is on {street}.",
        ],
        "questions": ["Who is {u}'s new GP?", "What is the name of {u}'s new family doctor?"],
        "answer": "Dr. {surname}",
    },
    {
        "key": "wifi",
        "slots": ["wifipw"],
        "statements": [
            "The wifi password at the cabin is {wifipw}, in case we forget again.",
            "Cabin wifi: network 'Lakeside', password {wifipw}.",
        ],
        "questions": [
            "What's the wifi password at the cabin {u} goes to?",
            "How does {u} get online at the lake cabin?",
        ],
        "answer": "{wifipw}",
    },
    {
        "key": "sofa",
        "slots": ["orderno"],
        "statements": [
            "The order number for the missing sofa is {orderno}, they still haven't delivered it.",
            "Customer service again about the sofa. Order {orderno}. Nobody knows where it is.",
        ],
        "questions": [
            "What is the order number for {u}'s missing sofa?",
            "Which reference should {u} quote about the couch that never arrived?",
        ],
        "answer": "{orderno}",
    },
    {
        "key": "anniversary",
        "slots": ["restaurant"],
        "statements": [
            "We had our anniversary dinner at {restaurant}, the tasting menu was unreal.",
            "{restaurant} for the anniversary last night, nine courses, I'm still full.",
        ],
        "questions": [
            "Where did {u} have the anniversary dinner?",
            "Which restaurant did {u} go to to celebrate the anniversary?",
        ],
        "answer": "{restaurant}",
    },
    {
        "key": "wheel",
        "slots": ["price"],
        "statements": [
            "The bike shop quoted {price} euros for a new back wheel.",
            "Asked about the bent wheel, the shop wants {price} euros to replace it.",
        ],
        "questions": [
            "How much did the bike shop quote {u} for the new wheel?",
            "What will it cost {u} to replace the rear wheel of the bicycle?",
        ],
        "answer": "{price} euros",
    },
    {
        "key": "rent",
        "slots": ["rent", "monthname"],
        "statements": [
            "Landlord just emailed: rent goes up to {rent} a month from {monthname}.",
            "Great, the rent is going up to {rent} starting in {monthname}.",
        ],
        "questions": ["What will {u}'s new rent be?", "How much will {u} pay for the flat each month now?"],
        "answer": "{rent} a month",
    },
    {
        "key": "notice",
        "slots": ["ordinal"],
        "statements": [
            "I handed in my notice today. Last day at the agency is the {ordinal} of next month.",
            "Resignation letter sent! I'm out of the agency on the {ordinal} next month.",
        ],
        "questions": ["When is {u}'s last day at work?", "When does {u} finish at the old job?"],
        "answer": "the {ordinal} of the following month",
    },
    {
        "key": "puppy",
        "slots": ["petname"],
        "statements": [
            "We decided to call the puppy {petname}, the kids voted.",
            "The little guy finally has a name: {petname}. He already ignores it.",
        ],
        "questions": ["What did {u} name the new dog?", "What is the name of {u}'s puppy?"],
        "answer": "{petname}",
    },
    {
        "key": "driving",
        "slots": ["attempt"],
        "statements": [
            "{attempt} attempt and I finally passed the driving test!",
            "Passed the driving exam on my {attempt_lower} try, L plates in the bin.",
        ],
        "questions": [
            "How many tries did it take {u} to get a driver's licence?",
            "On which attempt did {u} pass the driving test?",
        ],
        "answer": "on the {attempt_lower} attempt",
    },
    {
        "key": "wake",
        "slots": ["waketime"],
        "statements": [
            "I've started getting up at {waketime} to squeeze in a run before work.",
            "Alarm is set for {waketime} every day now so I can exercise before the office.",
        ],
        "questions": ["What time does {u} wake up these days?", "When is {u}'s alarm set for now?"],
        "answer": "{waketime}",
    },
    {
        "key": "language",
        "slots": ["language"],
        "statements": [
            "I signed up for {language} classes on Tuesday and Thursday evenings.",
            "First {language} lesson tonight, the teacher talks so fast.",
        ],
        "questions": ["Which language is {u} learning?", "What language course did {u} enrol in?"],
        "answer": "{language}",
    },
    {
        "key": "mortgage",
        "slots": ["rate"],
        "statements": [
            "The bank approved the mortgage at {rate} percent fixed for ten years.",
            "Mortgage offer came through: {rate}% fixed, ten years.",
        ],
        "questions": [
            "What interest rate did {u} get on the home loan?",
            "At what rate is {u}'s mortgage fixed?",
        ],
        "answer": "{rate}% fixed for ten years",
    },
    {
        "key": "codename",
        "slots": ["codename"],
        "statements": [
            "Our new project at work is codenamed {codename}, don't ask me why.",
            "Kick-off for project {codename} today, the name was the intern's idea.",
        ],
        "questions": [
            "What is the codename of {u}'s new work project?",
            "What is the new project at {u}'s job called?",
        ],
        "answer": "{codename}",
    },
    {
        "key": "blood",
        "slots": ["bloodtype"],
        "statements": [
            "Gave blood today, turns out I'm {bloodtype}, which is apparently quite rare.",
            "The donation nurse said my blood group is {bloodtype}, they were thrilled.",
        ],
        "questions": ["What is {u}'s blood type?", "Which blood group does {u} have?"],
        "answer": "{bloodtype}",
    },
    {
        "key": "boots",
        "slots": ["size"],
        "statements": [
            "Finally found hiking boots in a {size} that don't give me blisters.",
            "Ordered trail shoes in size {size}, fingers crossed they fit.",
        ],
        "questions": ["What shoe size does {u} wear?", "Which size should hiking boots for {u} be?"],
        "answer": "{size}",
    },
]

# The move: the anchor of every user's "before / after the move" questions.
MOVE_STATEMENTS = [
    "We got the keys and moved into the new flat on {street} this weekend!",
    "Moving day done. New address: {street}. I never want to see a cardboard box again.",
]
MOVE_QUESTIONS = ["What street did {u} move to?", "Where is {u}'s new flat?"]
MOVE_REPLIES = ["Congratulations on the new place! How does it feel?", "Welcome home! Unpacking can wait."]

FACT_REPLIES = [
    "Noted, I'll keep that in mind.",
    "Got it.",
    "Good to have that written down somewhere.",
    "Thanks for telling me!",
    "Okay, saved in my head.",
    "Ha, okay. Anything else on the list?",
    "That's good to know.",
    "Oh nice, that's sorted then.",
]

# -- multi-hop: a relation introduced in one turn, a fact about the person in another ------------
# relation -> "f" / "m" when the word implies it, "" otherwise
RELATIONS = {
    "sister": "f",
    "brother": "m",
    "cousin": "",
    "neighbour": "",
    "manager": "",
    "best friend": "",
    "aunt": "f",
    "uncle": "m",
    "mentor": "",
    "old school friend": "",
    "brother-in-law": "m",
    "godmother": "f",
}
HOP_INTROS = [
    "My {rel} {p} is coming over for dinner on Saturday, so I have to clean everything.",
    "Had a long call with {p}, my {rel}, about absolutely nothing. It was lovely.",
    "{p}, my {rel}, keeps sending me memes at two in the morning.",
    "Went for a walk with my {rel} {p} along the river, first time in months.",
    "I owe my {rel} {p} a proper thank-you for helping me move the bookcase.",
    "Lunch with {p} today, my {rel}, we talked for three hours straight.",
    "My {rel} {p} has strong opinions about my haircut, as always.",
    "{p} (my {rel}) just texted to ask if I'm still alive, fair enough.",
    "Going to a wedding with my {rel} {p} next month, need an outfit.",
]
HOP_INTRO_REPLIES = [
    "That sounds lovely.",
    "It's nice to have people like that around.",
    "Ha, sounds like a fun relationship.",
    "Enjoy the time together!",
]
HOP_ATTRIBUTES: dict[str, dict] = {
    "city": {
        "slot": "city",
        "statements": [
            "{p} finally found a flat in {city}, five minutes from the station.",
            "{p} signed a lease in {city}, so that's where we'll be visiting from now on.",
            "Got a postcard from {p}, life in {city} seems to suit them.",
        ],
        "questions": ["Where does {u}'s {rel} live?", "Which city is {u}'s {rel} living in?"],
        "answer": "{city}",
    },
    "employer": {
        "slot": "company",
        "statements": [
            "{p} just started at {company}, first week went well apparently.",
            "{p} got the job at {company}! The interview was a nightmare but it worked out.",
            "{p} has been at {company} for ages and still complains about the canteen.",
        ],
        "questions": ["Where does {u}'s {rel} work?", "Which company employs {u}'s {rel}?"],
        "answer": "{company}",
    },
    "pet": {
        "slot": "petname",
        "statements": [
            "{p} adopted a {pet} from the shelter and named it {petname}.",
            "{p}'s {pet} {petname} chewed through a phone charger again.",
        ],
        "questions": [
            "What is the name of the {pet} that belongs to {u}'s {rel}?",
            "What did {u}'s {rel} call their {pet}?",
        ],
        "answer": "{petname}",
    },
    "instrument": {
        "slot": "instrument",
        "statements": [
            "{p} plays the {instrument} in a little band every Friday.",
            "{p} has been practising the {instrument} so much the neighbours complained.",
        ],
        "questions": [
            "What instrument does {u}'s {rel} play?",
            "Which musical instrument does {u}'s {rel} practise?",
        ],
        "answer": "the {instrument}",
    },
    "car": {
        "slot": "car",
        "statements": [
            "{p} bought {car}, which is hilarious if you know them.",
            "{p} picked me up in {car}, I had no idea they'd bought one.",
        ],
        "questions": ["What car does {u}'s {rel} drive?", "What vehicle did {u}'s {rel} buy?"],
        "answer": "{car}",
    },
    "allergy": {
        "slot": "allergen",
        "statements": [
            "{p} is badly allergic to {allergen}, so we always check the menu.",
            "We had to leave the restaurant because {p} reacted to {allergen} in the sauce.",
        ],
        "questions": ["What is {u}'s {rel} allergic to?", "Which allergy does {u}'s {rel} have?"],
        "answer": "{allergen}",
    },
    "study": {
        "slot": "field",
        "statements": [
            "{p} is doing a master's in {field} and loving it.",
            "{p} handed in a huge essay for the {field} course last night.",
        ],
        "questions": ["What is {u}'s {rel} studying?", "Which subject is {u}'s {rel} doing a degree in?"],
        "answer": "{field}",
    },
    "coach": {
        "slot": "sport",
        "statements": [
            "{p} coaches a kids' {sport} team on Saturday mornings.",
            "{p}'s {sport} team of ten-year-olds won their first match!",
        ],
        "questions": ["What sport does {u}'s {rel} coach?", "Which sport does {u}'s {rel} train kids in?"],
        "answer": "{sport}",
    },
}
HOP_NAME_DISTRACTORS = [
    "{p} sent me a voice note that was eleven minutes long.",
    "Haven't heard from {p} in a while.",
    "{p} is coming to the party too, apparently.",
    "{p} lent me a book I'll never finish.",
]

# -- preferences, stated indirectly -----------------------------------------------------------
# Each pair is (how the user said it, how someone later asks); one pair per user is used. The
# first pair of an entry shares a word with its question, the second mostly does not.
PREFERENCES: list[dict] = [
    {
        "key": "cilantro",
        "pairs": [
            (
                "Cilantro tastes like soap to me, I pick out every single leaf.",
                "Would {u} want extra cilantro on the tacos?",
            ),
            (
                "Why does every taco place drown everything in coriander? Tastes like washing-up liquid.",
                "Which herb does {u} dislike?",
            ),
        ],
        "answer": "dislikes cilantro (coriander)",
        "distractors": [
            "{p} puts coriander on absolutely everything.",
            "Do you think I can grow cilantro on a windowsill?",
        ],
    },
    {
        "key": "jazz",
        "pairs": [
            (
                "Honestly no music makes me happier than old Miles Davis and Coltrane records.",
                "What kind of music does {u} enjoy?",
            ),
            (
                "Found a tiny bar with a trio doing Thelonious Monk covers, I was in heaven.",
                "What genre should a playlist for {u} be?",
            ),
        ],
        "answer": "jazz",
        "distractors": [
            "My neighbour blasts techno every Friday night.",
            "{p} only listens to heavy metal, even while cooking.",
        ],
    },
    {
        "key": "cool_weather",
        "pairs": [
            (
                "Give me grey drizzly weather over a heatwave any time.",
                "Does {u} prefer hot or cool weather?",
            ),
            (
                "Thirty degrees and I'm a puddle. I'm genuinely happier at ten degrees and cloudy.",
                "Would {u} enjoy a beach holiday in the August heat?",
            ),
        ],
        "answer": "prefers cool, cloudy weather; hates heat",
        "distractors": [
            "{p} is off to the beach again, chasing the sun as usual.",
            "The forecast says a heatwave is coming next week.",
        ],
    },
    {
        "key": "hiking_trips",
        "pairs": [
            (
                "Resorts bore me to tears, I'd rather carry a backpack from hut to hut.",
                "Would {u} like an all-inclusive resort?",
            ),
            (
                "Give me a tent and a trail map over a hotel pool any day.",
                "What kind of holiday does {u} prefer?",
            ),
        ],
        "answer": "outdoor hiking/camping trips, not resorts",
        "distractors": [
            "{p} booked a spa resort for a week, pure luxury.",
            "Holiday brochures came in the post again.",
        ],
    },
    {
        "key": "black_coffee",
        "pairs": [
            ("Sugar ruins coffee. Black, strong, nothing else.", "How does {u} take coffee?"),
            (
                "Why would anyone put syrup in an espresso? Plain and dark, please.",
                "Should {u}'s latte get caramel flavouring?",
            ),
        ],
        "answer": "black, no sugar or syrup",
        "distractors": [
            "{p} orders the sweetest caramel latte on the menu every time.",
            "The cafe downstairs changed its coffee beans.",
        ],
    },
    {
        "key": "horror",
        "pairs": [
            (
                "I couldn't sleep for a week after the last horror film, never again.",
                "Would {u} enjoy a horror movie night?",
            ),
            (
                "Jump scares are not fun for me, I watch through my fingers and regret it.",
                "Does {u} like scary films?",
            ),
        ],
        "answer": "no, dislikes horror/scary films",
        "distractors": [
            "{p} is obsessed with horror films, they've seen every single one.",
            "There's a horror movie marathon at the cinema on Friday.",
        ],
    },
    {
        "key": "small_gigs",
        "pairs": [
            (
                "Big stadium concerts drain me, I'm happiest at a gig with thirty people in a basement.",
                "Would {u} rather see a stadium show or a small gig?",
            ),
            (
                "The festival was fine but forty thousand people is about thirty-nine thousand too many.",
                "Does {u} like large crowds?",
            ),
        ],
        "answer": "prefers small gigs; dislikes big crowds",
        "distractors": [
            "{p} got tickets for the stadium tour, front row.",
            "Concert tickets go on sale tomorrow morning.",
        ],
    },
    {
        "key": "window_seat",
        "pairs": [
            (
                "I always grab the window seat, watching the clouds is half the fun of flying.",
                "Does {u} prefer the aisle or the window seat?",
            ),
            (
                "Sitting by the corridor on a plane feels like a waiting room, I need to see out.",
                "Where should {u} sit on the plane?",
            ),
        ],
        "answer": "window seat",
        "distractors": [
            "{p} always wants the aisle so they can get up whenever.",
            "Seat selection costs extra on that airline now.",
        ],
    },
    {
        "key": "dogs",
        "pairs": [
            (
                "Cats make my eyes swell up within minutes, so I'm firmly on team dog.",
                "Is {u} a cat person or a dog person?",
            ),
            (
                "Any house with a feline and I'm sneezing, but I'll happily walk anyone's labrador.",
                "Should {u} get a kitten?",
            ),
        ],
        "answer": "dog person (allergic to cats)",
        "distractors": [
            "{p} has three cats and is thinking about a fourth.",
            "The animal shelter is doing an open day on Sunday.",
        ],
    },
    {
        "key": "spicy",
        "pairs": [
            (
                "Ordered the curry 'extra hot' and it still wasn't hot enough for me.",
                "Should the curry be mild for {u}?",
            ),
            (
                "The hotter the better, I put chili flakes on everything, even scrambled eggs.",
                "Does {u} like spicy food?",
            ),
        ],
        "answer": "loves very spicy food",
        "distractors": ["{p} thinks black pepper is spicy.", "The new Thai place opened on the corner."],
    },
    {
        "key": "not_morning",
        "pairs": [
            (
                "My brain does not switch on until mid-morning, early starts are torture.",
                "Is {u} a morning person?",
            ),
            (
                "I'm useless before ten, please nobody book me into an 8am meeting ever again.",
                "Would {u} like a 7am start?",
            ),
        ],
        "answer": "no, not a morning person",
        "distractors": [
            "{p} is up at five every day, no alarm needed.",
            "The meeting got moved to Thursday.",
        ],
    },
    {
        "key": "biographies",
        "pairs": [
            (
                "Fantasy books never hold my attention, hand me a fat biography instead.",
                "What kind of books does {u} like?",
            ),
            (
                "Give me a true story about a real life over any made-up kingdom with dragons.",
                "Would {u} enjoy a fantasy novel as a gift?",
            ),
        ],
        "answer": "biographies/true stories, not fantasy",
        "distractors": [
            "{p} has read every fantasy series ever written.",
            "The library is having a book sale next week.",
        ],
    },
    {
        "key": "tennis",
        "pairs": [
            (
                "Football on TV puts me to sleep, but I'll stay up till 2am for a tennis final.",
                "Would {u} want to watch the football match?",
            ),
            (
                "Wimbledon fortnight is my favourite two weeks of the year.",
                "Which sport does {u} enjoy watching?",
            ),
        ],
        "answer": "tennis (not football)",
        "distractors": [
            "{p} dragged me to a football match, we lost.",
            "The sports channel subscription went up.",
        ],
    },
    {
        "key": "swimming",
        "pairs": [
            (
                "Running feels like punishment, forty lengths in the pool and I'm a new person.",
                "Would {u} enjoy a running club?",
            ),
            (
                "Nothing clears my head like an early swim, the treadmill bores me stiff.",
                "What is {u}'s favourite way to exercise?",
            ),
        ],
        "answer": "swimming, not running",
        "distractors": [
            "{p} runs ten kilometres before breakfast.",
            "The pool is closed for cleaning this week.",
        ],
    },
    {
        "key": "savoury",
        "pairs": [
            (
                "Cake at the office again, I took a second helping of crisps instead.",
                "Should {u}'s birthday treat be a chocolate cake?",
            ),
            (
                "Desserts are wasted on me, I'd order the cheese plate every time.",
                "Does {u} have a sweet tooth?",
            ),
        ],
        "answer": "no, prefers savoury (cheese) to sweets",
        "distractors": [
            "{p} baked a chocolate cake the size of a tyre.",
            "There's a bake sale at work on Friday.",
        ],
    },
]
PREF_REPLIES = [
    "Ha, noted!",
    "Fair, everyone has their thing.",
    "I'll remember that.",
    "Strong opinions, I respect it.",
    "That makes total sense.",
]

# -- who said it: events told in shared sessions ------------------------------------------------
WHO_SAID: list[dict] = [
    {
        "key": "bike",
        "statements": [
            "My bike is broken again, the chain snapped on the way here.",
            "Rear wheel on my bicycle is bent, so it's out of action for now.",
        ],
        "questions": ["Who mentioned the broken bike?", "Who said their bicycle was out of action?"],
        "reaction": "Again? You should just buy a new one.",
    },
    {
        "key": "passport",
        "statements": [
            "I can't find my passport anywhere, I've turned the flat upside down.",
            "My passport has vanished and we fly in two weeks.",
        ],
        "questions": ["Who lost their passport?", "Who couldn't find their travel document?"],
        "reaction": "Check the coat pockets, it's always the coat pockets.",
    },
    {
        "key": "ticket",
        "statements": [
            "I got a parking ticket outside the bakery, forty euros for five minutes!",
            "Parking fine on my windscreen this morning, I was gone four minutes.",
        ],
        "questions": ["Who got a parking ticket?", "Who was fined for parking?"],
        "reaction": "That's daylight robbery.",
    },
    {
        "key": "lockout",
        "statements": [
            "I locked myself out last night and waited an hour for the locksmith.",
            "Keys inside, me outside, at midnight. Locksmith charged a fortune.",
        ],
        "questions": ["Who got locked out?", "Who needed a locksmith at night?"],
        "reaction": "We really need to leave a spare key somewhere.",
    },
    {
        "key": "fox",
        "statements": [
            "There was a fox sitting on our garden wall at 6am, just staring at me.",
            "I saw a fox trotting down the street with a sandwich in its mouth.",
        ],
        "questions": ["Who saw a fox?", "Who spotted a wild animal near the house?"],
        "reaction": "Urban wildlife is wild.",
    },
    {
        "key": "phone_canal",
        "statements": [
            "I dropped my phone in the canal. Gone. Completely gone.",
            "My phone slipped out of my pocket off the bridge, straight into the water.",
        ],
        "questions": ["Who dropped their phone in the water?", "Who lost a phone in the canal?"],
        "reaction": "RIP phone. Did you have a backup?",
    },
    {
        "key": "smoke_alarm",
        "statements": [
            "I burned the lasagna so badly the smoke alarm went off.",
            "Set off the fire alarm making toast. Toast!",
        ],
        "questions": ["Who set off the smoke alarm while cooking?", "Who burned the food?"],
        "reaction": "Cooking is hard, ok.",
    },
    {
        "key": "promotion",
        "statements": [
            "I got promoted to team lead, still can't believe it.",
            "They made me head of the department today!",
        ],
        "questions": ["Who got promoted?", "Who is the new team lead?"],
        "reaction": "We're celebrating tonight, no arguments.",
    },
    {
        "key": "train",
        "statements": [
            "Missed the last train home and had to sleep at the station.",
            "The last train left while I was buying crisps, spent the night on a bench.",
        ],
        "questions": ["Who missed the last train?", "Who slept at the station?"],
        "reaction": "That sounds miserable.",
    },
    {
        "key": "quiz",
        "statements": [
            "Our team won the pub quiz on Thursday, first time ever!",
            "We won the quiz night! The tie-breaker was about penguins.",
        ],
        "questions": ["Who won the pub quiz?", "Whose team won the quiz night?"],
        "reaction": "Finally, all that trivia paid off.",
    },
    {
        "key": "wasp",
        "statements": [
            "A wasp stung me right on the eyelid, I look ridiculous.",
            "Got stung by a wasp at the picnic, my hand is twice the size.",
        ],
        "questions": ["Who was stung by a wasp?", "Who got a wasp sting?"],
        "reaction": "Put some ice on it.",
    },
    {
        "key": "ankle",
        "statements": [
            "I twisted my ankle stepping off the tram.",
            "Sprained my ankle on the stairs, I'm hobbling everywhere.",
        ],
        "questions": ["Who hurt their ankle?", "Who sprained an ankle?"],
        "reaction": "Ice, rest and no heroics.",
    },
    {
        "key": "tyre",
        "statements": [
            "Flat tyre on the motorway this morning, in the rain of course.",
            "Had to change a punctured tyre on the hard shoulder today.",
        ],
        "questions": ["Who had a flat tyre?", "Who got a puncture on the motorway?"],
        "reaction": "Glad you're okay though.",
    },
    {
        "key": "wallet",
        "statements": [
            "I found a wallet on the bus and handed it in at the depot.",
            "Someone left their wallet at the cafe table, I took it to the police.",
        ],
        "questions": ["Who found a wallet?", "Who handed in a lost wallet?"],
        "reaction": "Good karma incoming.",
    },
    {
        "key": "haircut",
        "statements": [
            "The hairdresser cut way too much off, I look like a boiled egg.",
            "Asked for a trim, got a buzz cut. I'm wearing a hat for a month.",
        ],
        "questions": ["Who had a bad haircut?", "Who is unhappy with the hairdresser?"],
        "reaction": "It'll grow back, promise.",
    },
    {
        "key": "vase",
        "statements": [
            "I knocked my grandmother's vase off the shelf, it's in pieces.",
            "Broke the antique vase while dusting, I feel awful.",
        ],
        "questions": ["Who broke the vase?", "Who smashed the antique vase?"],
        "reaction": "Maybe it can be glued?",
    },
]
WHO_SAID_REPLIES = [
    "Oh no!",
    "That's quite a story.",
    "Wow, what a week you're both having.",
    "Ha, I'm sorry, that's rough.",
    "Goodness. Are you okay?",
]

# -- topics that come back over months (temporal questions) --------------------------------------
# Each statement: (text, short answer). "label" is how a question names the topic; "words" are
# the words that make a filler line count as talking about the topic.
TOPICS: dict[str, dict] = {
    "car": {
        "label": "the car",
        "words": ["car"],
        "statements": [
            (
                "The car's been making a grinding noise when I brake, I should get it looked at.",
                "a grinding noise when braking",
            ),
            (
                "Mechanic says the brake pads were worn to nothing, the car's fixed but that cost a fortune.",
                "the brake pads were replaced and it was expensive",
            ),
            (
                "The car failed its inspection because of a rusty exhaust, so annoying.",
                "it failed inspection because of a rusty exhaust",
            ),
            (
                "I finally sold the car to a colleague, we're going car-free for a while.",
                "they sold it to a colleague",
            ),
        ],
        "filler": [
            "I need to fill up the car before the weekend.",
            "Parking the car in the centre is impossible on Saturdays.",
        ],
    },
    "knee": {
        "label": "the knee",
        "words": ["knee", "knees"],
        "statements": [
            ("My knee has been aching after every run, I might have overdone it.", "it aches after runs"),
            (
                "Physio says it's a strained ligament in the knee, no running for a month.",
                "a strained ligament, no running for a month",
            ),
            ("Knee feels much better, did a gentle 5k without any pain.", "much better, ran 5k pain-free"),
            (
                "Bought a knee brace just in case, the old pain came back on the stairs.",
                "the pain came back, bought a brace",
            ),
        ],
        "filler": ["Stairs at the office are not my knees' friend."],
    },
    "balcony": {
        "label": "the balcony garden",
        "words": ["balcony", "tomatoes", "tomato"],
        "statements": [
            ("Planted tomatoes and basil on the balcony, fingers crossed.", "planted tomatoes and basil"),
            (
                "Something is eating my balcony tomatoes, I suspect pigeons.",
                "something (pigeons?) is eating the tomatoes",
            ),
            (
                "First ripe tomatoes from the balcony today, they taste incredible.",
                "first ripe tomatoes, delicious",
            ),
            ("Cleared out the balcony pots for winter, it looks so bare now.", "cleared the pots for winter"),
        ],
        "filler": ["Sat on the balcony with a coffee this morning."],
    },
    "landlord": {
        "label": "the landlord",
        "words": ["landlord"],
        "statements": [
            (
                "The landlord still hasn't fixed the leaking window, third email this month.",
                "the leaking window still isn't fixed",
            ),
            (
                "Landlord finally sent someone for the window, took them ten minutes.",
                "the window was finally fixed",
            ),
            (
                "The landlord wants to do an inspection next week, so I'm cleaning like mad.",
                "an inspection is coming, so cleaning",
            ),
            (
                "Landlord mentioned he might sell the building, which is worrying.",
                "he might sell the building",
            ),
        ],
        "filler": ["Need to forward that letter to the landlord at some point."],
    },
    "guitar": {
        "label": "the guitar",
        "words": ["guitar"],
        "statements": [
            ("Started guitar lessons, my fingertips are destroyed.", "started lessons, sore fingertips"),
            ("Learned my first full song on the guitar, slow but recognisable.", "learned a first full song"),
            (
                "My guitar teacher says I should practise scales instead of just strumming.",
                "the teacher wants more scales practice",
            ),
            (
                "Played guitar at a friend's party, only messed up the bridge twice.",
                "played at a friend's party",
            ),
        ],
        "filler": ["My guitar is gathering dust in the corner, looking at me."],
    },
    "sleep": {
        "label": "sleep",
        "words": ["sleep", "sleeping", "slept", "insomnia"],
        "statements": [
            (
                "I've been waking up at 4am every night this week, no idea why.",
                "waking up at 4am every night",
            ),
            (
                "Stopped drinking coffee after lunch and I'm sleeping through the night now.",
                "sleeping through after cutting afternoon coffee",
            ),
            ("Bought blackout curtains, best purchase of the year for my sleep.", "blackout curtains helped"),
            ("Sleep is a mess again since the clocks changed.", "sleep is bad again since the clock change"),
        ],
        "filler": ["Slept badly, the neighbours had a party."],
    },
    "kitchen": {
        "label": "the kitchen renovation",
        "words": ["kitchen", "renovation"],
        "statements": [
            ("Got three quotes for redoing the kitchen, all of them terrifying.", "got three scary quotes"),
            (
                "Kitchen is gutted, we're cooking on a camping stove in the living room.",
                "the kitchen is gutted, cooking on a camping stove",
            ),
            (
                "New kitchen cabinets arrived in the wrong colour, of course.",
                "the cabinets came in the wrong colour",
            ),
            (
                "Kitchen's finally done, I keep opening drawers just because they close softly.",
                "it's finished",
            ),
        ],
        "filler": ["The kitchen tap is dripping again."],
    },
    "job_search": {
        "label": "the job search",
        "words": ["interview", "applications", "job"],
        "statements": [
            ("Sent out five job applications this week, nothing back yet.", "sent five applications"),
            (
                "Had a second-round interview for a product role, felt okay.",
                "a second-round interview for a product role",
            ),
            ("Got rejected after the final round, gutted.", "rejected after the final round"),
            ("Accepted an offer! Starting the new role after the holidays.", "accepted an offer"),
        ],
        "filler": ["Updating my CV is the most boring job in the world."],
    },
    "dog": {
        "label": "the dog",
        "words": ["dog"],
        "statements": [
            ("The dog keeps pulling on the lead, walks are a full workout.", "he pulls on the lead"),
            ("Dog training class went well, he finally sits on command.", "he learned to sit on command"),
            (
                "The dog ate a sock, we spent the evening at the emergency vet.",
                "he ate a sock, emergency vet",
            ),
            ("The dog has learned to open the back door, we're doomed.", "he learned to open the back door"),
        ],
        "filler": ["Walked the dog in the rain, we're both soaked."],
    },
    "bathroom": {
        "label": "the bathroom leak",
        "words": ["bathroom", "leak"],
        "statements": [
            (
                "There's a damp patch on the bathroom ceiling, probably the upstairs shower.",
                "a damp patch appeared on the ceiling",
            ),
            (
                "Bathroom ceiling leak is getting worse, there's a bucket under it now.",
                "getting worse, a bucket under it",
            ),
            ("Insurance agreed to cover the bathroom leak repairs.", "insurance will pay for repairs"),
            ("Bathroom ceiling is repainted, you'd never know there was a leak.", "repaired and repainted"),
        ],
        "filler": ["Need to buy new towels for the bathroom."],
    },
    "app": {
        "label": "the budgeting app",
        "words": ["app"],
        "statements": [
            ("Started building a little budgeting app on weekends.", "started building it on weekends"),
            (
                "My budgeting app finally syncs with the bank export, small victory.",
                "it syncs with the bank export now",
            ),
            (
                "Showed the app to a few friends, they found eleven bugs in ten minutes.",
                "friends found eleven bugs",
            ),
            ("Put the budgeting app on hold, no energy for side projects right now.", "put it on hold"),
        ],
        "filler": ["The bank app logged me out again."],
    },
}
TOPIC_QUESTIONS = [
    "What did {u} say about {label} {when}?",
    "What was the news about {label} {when}?",
    "What update did {u} give on {label} {when}?",
]
TOPIC_REPLIES = [
    "Oh, how frustrating. Keep me posted.",
    "That's progress at least!",
    "Hm, one step at a time.",
    "Good to hear how it's going.",
    "Thanks for the update.",
]

# Topics split by the move: one statement before it, one after.
MOVE_TOPICS: dict[str, dict] = {
    "commute": {
        "words": ["commute", "commuting"],
        "before": (
            "My commute is a fifty-minute bus ride, I get through a lot of podcasts.",
            "a fifty-minute bus ride",
        ),
        "after": (
            "I cycle to work along the river now, twelve minutes door to door.",
            "cycling along the river, twelve minutes",
        ),
        "questions": ["How did {u} get to work {when}?", "What was {u}'s commute like {when}?"],
    },
    "noise": {
        "words": ["noise", "noisy"],
        "before": (
            "The street outside is so loud, buses all night and a bar on the corner.",
            "loud: night buses and a bar",
        ),
        "after": ("The new place is so quiet at night I can hear owls.", "very quiet, owls at night"),
        "questions": [
            "What was {u}'s street like at night {when}?",
            "How noisy was it where {u} lived {when}?",
        ],
    },
    "groceries": {
        "words": ["groceries", "grocery"],
        "before": (
            "The only shop near me is a tiny overpriced corner store.",
            "a tiny overpriced corner store",
        ),
        "after": (
            "There's a farmers' market two streets away, I go every Saturday.",
            "a farmers' market two streets away",
        ),
        "questions": ["Where did {u} buy groceries {when}?", "What shopping did {u} have nearby {when}?"],
    },
}
